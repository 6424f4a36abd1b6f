"""HTTP: the specification's routes, our own under /dailies/v1, OpenAPI, bodies, trusted proxies."""
