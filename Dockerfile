# One image for every Benchwarmers service; the command picks the service:
#   python -m services.gateway | services.seater | services.caller | services.ledger | services.prober
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    BENCHWARMERS_HOME=/data

WORKDIR /app

# Dependencies first: this layer is rebuilt only when the lock changes.
COPY requirements.lock ./
RUN pip install -r requirements.lock

COPY pyproject.toml README.md ./
COPY shared ./shared
COPY services ./services
COPY cli ./cli
COPY suite ./suite
RUN pip install --no-deps . \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin bench \
    && mkdir -p /data && chown bench /data

USER 10001
EXPOSE 8122
CMD ["python", "-m", "services.gateway"]
