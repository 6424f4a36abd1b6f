"""Input the CLI refuses before anything is sent: one line on stderr and exit 2 (`dailies --help`:
"refused before anything was sent or written"), never a traceback, and never a body changed on the
way. No service runs here: the client's transport records what would have been sent."""

from __future__ import annotations

import io
import json
import sys

import httpx
import pytest

from dailies.cli import main
from dailies.cli import tasks as cli_client
from dailies.spec.strict_json import JsonRefused, parse_strict_json

from .running import run

TASK_ID = "cgt-20260101000000-abcde"
BODY = {"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "a kite"}]}


@pytest.fixture
def sent(monkeypatch):
    """The requests the CLI's client sends (each answered with a created task's id)."""
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, json={"id": TASK_ID})

    real = cli_client.make_client
    monkeypatch.setattr(cli_client, "make_client",
                        lambda args, **options: real(args, transport=httpx.MockTransport(handler), **options))
    monkeypatch.setenv("ARK_BASE_URL", "http://dailies.invalid/api/v3")
    monkeypatch.setenv("ARK_API_KEY", "sk-local-refusals")
    return requests


def refused(*argv: str) -> str:
    """The one line on stderr of a command refused with exit 2 and nothing on stdout."""
    code, out, err = run(*argv)
    assert (code, out) == (2, ""), (argv, code, out, err)
    assert err.startswith("dailies: ") and err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize(("text", "kind"), [("[1]", "an array"), ("null", "null"), ('"x"', "a string"),
                                            ("5", "a number"), ("true", "a boolean")])
def test_a_body_that_is_json_but_not_an_object_is_one_line_and_exit_2(sent, tmp_path, text, kind):
    """It used to end in a TypeError traceback from the client (exit 1); the service's words instead."""
    body = tmp_path / "body.json"
    body.write_text(text)
    assert refused("create", "--body", str(body)) == (
        f"dailies: --body {body}: the request body must be a JSON object, not {kind}")
    assert sent == []


def test_a_body_from_stdin_that_is_not_an_object_is_refused_too(sent, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"null\n")))
    assert refused("create", "--body", "-") == "dailies: --body -: the request body must be a JSON object, not null"
    assert sent == []


@pytest.mark.parametrize("command", ["get", "request", "cancel", "wait", "download"])
def test_an_empty_task_id_is_refused_naming_the_argument(sent, capsys, command):
    """`dailies get ""` used to reach the client's ValueError, a traceback."""
    with pytest.raises(SystemExit) as stopped:
        main([command, ""])  # not run(): argparse's message goes to the real stderr, which capsys reads
    assert stopped.value.code == 2
    said = capsys.readouterr().err.splitlines()[-1]
    assert said == f"dailies {command}: error: argument task_id: is empty (`dailies list` shows the task ids)"
    assert sent == []


@pytest.mark.parametrize(("options", "said"), [
    (("--page", "501"), "page_num: 501 is out of range: input should be less than or equal to 500"),
    (("--page", "0"), "page_num: 0 is out of range: input should be greater than or equal to 1"),
    (("--page-size", "0"), "page_size: 0 is out of range: input should be greater than or equal to 1"),
    (("--page-size", "501"), "page_size: 501 is out of range: input should be less than or equal to 500"),
])
def test_list_options_refused_locally_exit_2_as_create_does(sent, options, said):
    """They exited 1, the status of a service that refused or could not be reached: nothing was sent."""
    assert refused("list", *options) == f"dailies: invalid list query: {said}"
    assert sent == []


@pytest.mark.parametrize(("text", "param"), [
    ('{"model": "nope", "model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "dup"}]}',
     "model"),
    ('{"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "a", "text": "b"}]}',
     "content[0].text"),
    ('{"model": "doubao-seedance-2-0-260128", "seed": NaN, "content": [{"type": "text", "text": "x"}]}', "seed"),
    ('{"model": "doubao-seedance-2-0-260128", "seed": -Infinity, "content": [{"type": "text", "text": "x"}]}',
     "seed"),
])
@pytest.mark.parametrize("no_local_check", [False, True])
def test_a_body_the_service_would_refuse_as_json_is_refused_with_its_words(sent, tmp_path, text, param,
                                                                          no_local_check):
    """--body is sent as it is: a key given twice was collapsed to its last value and the body sent
    (created and billed, where the service refuses that very file), NaN refused in pydantic's words.
    The service's own parser judges the file, so the line is the service's message, naming the field;
    --no-local-check skips the catalog's rules, not this: the file cannot be sent as it is."""
    body = tmp_path / "body.json"
    body.write_text(text)
    with pytest.raises(JsonRefused) as service:
        parse_strict_json(text.encode())
    assert service.value.param == param
    line = refused("create", "--body", str(body), *(["--no-local-check"] if no_local_check else []))
    assert line == f"dailies: --body {body}: {service.value.message}"
    assert line.startswith(f"dailies: --body {body}: {param}: ")
    assert line.endswith(("the key appears twice in one object.", "is not a JSON value."))
    assert sent == []


def test_a_body_the_service_takes_is_sent_with_its_values(sent, tmp_path):
    body = tmp_path / "body.json"
    body.write_text(json.dumps(BODY | {"resolution": "480p", "duration": 4}))
    code, out, err = run("create", "--body", str(body))
    assert (code, out.strip()) == (0, TASK_ID), err
    [request] = sent
    assert json.loads(request.content) == BODY | {"resolution": "480p", "duration": 4}
