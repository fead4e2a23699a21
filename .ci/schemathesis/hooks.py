"""Schemathesis hooks for launchdir's API run (.ci/schemathesis/run).

A client sends a fresh Idempotency-Key for each distinct request and the same key only to retry that
request (the document says so). Schemathesis would otherwise send one drawn key ("0") with many
different bodies, and the service answers those 422 idempotency_key_reused, as it must. So every
positive request that carries the header gets a new key just before it is sent, in every phase.
Negative cases are left alone: they expect a 4xx anyway, and editing them would turn them positive
in schemathesis' bookkeeping (a header it meant to leave out would be sent). Every other value is
left as drawn.
"""
import uuid

import schemathesis


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    if not negative and case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
