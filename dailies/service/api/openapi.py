"""The OpenAPI document, stating what each route really accepts and returns.

The create and list routes parse their input themselves (to drop nulls, to report every problem
in the spec's error shape, to stream-limit the body), so FastAPI cannot infer their schemas; they
are added here from the same pydantic models that validate them.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from dailies.service.api.routes import TASKS
from dailies.spec import limits as L
from dailies.spec.models import CreateTaskRequest, CreateTaskResponse, ErrorResponse, ListTasksResponse, TaskRecord
from dailies.spec.statuses import LISTABLE_FILTERS

REF = "#/components/schemas/{model}"


def _schema(model) -> tuple[dict, dict]:
    schema = model.model_json_schema(ref_template=REF, mode="validation")
    defs = schema.pop("$defs", {})
    return schema, defs


def _json(ref_name: str) -> dict:
    return {"application/json": {"schema": {"$ref": REF.format(model=ref_name)}}}


def _errors(*statuses: int) -> dict:
    return {str(s): {"description": "Error", "content": _json("ErrorResponse")} for s in statuses}


def _list_parameters() -> list[dict]:
    def q(name: str, schema: dict, description: str, **extra) -> dict:
        return {"name": name, "in": "query", "required": False, "schema": schema, "description": description, **extra}

    return [
        q("page_num", {"type": "integer", "minimum": L.PAGE_NUM_MIN, "maximum": L.PAGE_NUM_MAX,
                       "default": L.PAGE_NUM_DEFAULT}, "Page number."),
        q("page_size", {"type": "integer", "minimum": L.PAGE_SIZE_MIN, "maximum": L.PAGE_SIZE_MAX,
                        "default": L.PAGE_SIZE_DEFAULT}, "Results per page."),
        q("filter.status", {"type": "string", "enum": [str(s) for s in LISTABLE_FILTERS]},
          "Status to match (`expired` is not a filter value)."),
        q("filter.task_ids", {"type": "array", "items": {"type": "string"}},
          "Task ids; repeat the parameter for several.", style="form", explode=True),
        q("filter.model", {"type": "string"}, "Endpoint id (or model id) the task was created with."),
        q("filter.service_tier", {"type": "string", "enum": ["default", "flex"], "default": "default"},
          "Service tier; `flex` tasks are listed only when asked for."),
    ]


def _answers_beyond_200(path: str) -> tuple[int, ...]:
    """The error answers an operation of this path may give besides those stated above: every keyed
    route refuses a bad key (401), a bad parameter (400), another project's or an unknown task (404), a
    key over its rate (429) and answers 503 while the database or the bucket does not; Dailies' own add
    403 (a budget, a role); a result file is refused without a valid signature (403) or once gone (404);
    /readyz is 503 while a dependency does not answer."""
    if path == "/readyz":
        return (503,)
    if path.startswith("/files/"):
        return 400, 403, 404, 503
    if path.endswith("/cancel"):  # a finished task is not cancelled: 409
        return 400, 401, 403, 404, 409, 429, 503
    if path.startswith("/dailies/"):
        return 400, 401, 403, 404, 429, 503
    if path.startswith("/api/"):
        return 400, 401, 404, 429, 503
    return ()


def install_openapi(app: FastAPI) -> None:
    def build() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        components = doc.setdefault("components", {}).setdefault("schemas", {})
        for model in (CreateTaskRequest, CreateTaskResponse, TaskRecord, ListTasksResponse, ErrorResponse):
            schema, defs = _schema(model)
            components[model.__name__] = schema
            components.update(defs)
        paths = doc["paths"]
        auth = _errors(401)
        create = paths[TASKS]["post"]
        create["requestBody"] = {"required": True, "content": _json("CreateTaskRequest")}
        create["responses"] = {"200": {"description": "Task created", "content": _json("CreateTaskResponse")},
                               **_errors(400, 403, 404, 409, 413, 415, 429), **auth}
        for parameter in create.get("parameters", []):
            if parameter["in"] == "header" and parameter["name"].lower() == "idempotency-key":
                # What routes.py holds a key to (it is stored with the task for 24 hours).
                parameter["schema"] = {"type": "string", "minLength": 1, "maxLength": L.IDEMPOTENCY_KEY_MAX_CHARS,
                                       "pattern": "^[\\x20-\\x7e]+$"}
        listing = paths[TASKS]["get"]
        listing["parameters"] = [p for p in listing.get("parameters", []) if p["in"] != "query"] + _list_parameters()
        listing["responses"] = {"200": {"description": "A page of tasks", "content": _json("ListTasksResponse")},
                                **_errors(400), **auth}
        one = paths[TASKS + "/{task_id}"]
        one["get"]["responses"] = {"200": {"description": "The task", "content": _json("TaskRecord")},
                                   **_errors(404), **auth}
        one["delete"]["responses"] = {"200": {"description": "Cancelled or deleted",
                                              "content": {"application/json": {"schema": {"type": "object"}}}},
                                      **_errors(404, 409), **auth}
        for path, path_item in paths.items():
            for operation in path_item.values():
                responses = operation.setdefault("responses", {})
                responses.pop("422", None)
                for status in _answers_beyond_200(path):
                    responses.setdefault(str(status), _errors(status)[str(status)])
        doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        doc["security"] = [{"bearer": []}]
        app.openapi_schema = doc
        return doc

    app.openapi = build  # type: ignore[method-assign]  # FastAPI's documented way to replace the document
