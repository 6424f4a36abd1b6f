"""Where the service's endpoints beyond the specification live: one prefix, under which the spec's
paths never fall (api/own_api.py's routes, the gateway's upstream callbacks)."""

PREFIX = "/dailies/v1"
