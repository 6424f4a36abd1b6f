"""Fuzz every operation of the OpenAPI document: whatever comes in, no 5xx, every 4xx is in the spec's
error shape, and the document says what the service answers (its status codes; Allow on a 405)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import hypothesis
import pytest
import schemathesis
from schemathesis.specs.openapi.checks import allow_header_conformance, status_code_conformance

from dailies.service.api.app import create_app
from dailies.service.settings import Settings

_DATA = Path(tempfile.mkdtemp(prefix="dailies-fuzz-"))
atexit.register(shutil.rmtree, _DATA, True)  # the module lives as long as its process
APP = create_app(Settings(data_dir=_DATA, api_keys={"fuzz-key": "fuzz"}, workers=0, log_requests=False),
                 start_background=False)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.mark.slow
@schema.parametrize()
@hypothesis.settings(max_examples=60, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
def test_no_input_crashes_the_service(case):
    response = case.call(headers={"Authorization": "Bearer fuzz-key"})
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        error = response.json()["error"]
        assert set(error) >= {"message", "type", "param", "code"}
        assert "Request ID: " in error["message"]
    case.validate_response(response, checks=[status_code_conformance, allow_header_conformance])
