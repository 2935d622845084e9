# One image for every Benchwarmers service; the command picks the service:
#   python -m services gateway console | python -m services.gateway | services.seater | services.caller | services.ledger | services.prober
# Runtime dependencies only (requirements-runtime.lock: pyproject's dependencies, pinned as in
# requirements.lock): no test runner, linter or provider SDK from the `dev` extra.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    BENCHWARMERS_HOME=/data \
    BENCH_OPS_PORT=9090

WORKDIR /app

# Dependencies first: this layer is rebuilt only when the lock changes.
COPY requirements-runtime.lock ./
RUN pip install -r requirements-runtime.lock

COPY pyproject.toml README.md ./
COPY shared ./shared
COPY services ./services
COPY cli ./cli
COPY suite ./suite
RUN pip install --no-deps . \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin bench \
    && mkdir -p /data && chown bench /data

USER 10001
# 8122: the gateway's HTTP; 9090: every service's ops port (/healthz, /readyz, /metrics; BENCH_OPS_PORT).
EXPOSE 8122 9090
# Alive, whichever service this container runs: its ops port answers /healthz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('BENCH_OPS_PORT', '9090'), timeout=2)"]
CMD ["python", "-m", "services", "gateway", "console"]
