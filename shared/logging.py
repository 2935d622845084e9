"""structlog set up once per process: JSON lines on stderr, with ids bound through contextvars."""

from __future__ import annotations

import logging
import sys

import structlog


def setup_logging(service: str, level: str = "INFO") -> structlog.stdlib.BoundLogger:
    logging.basicConfig(format="%(message)s", stream=sys.stderr, level=getattr(logging, level.upper(), 20))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper(), 20)),
        # One write per line (print() writes the line and its newline apart: two syscalls unbuffered).
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    log: structlog.stdlib.BoundLogger = structlog.get_logger(service=service)
    return log
