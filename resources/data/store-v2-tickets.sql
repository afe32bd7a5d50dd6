-- Embedded demo store, schema version 2: after-sales tickets. Applied after version 1, in one
-- transaction, to a new store and to an existing version 1 file alike. Statements end with a
-- semicolon at the end of a line.
--
-- One ticket per (tenant, idempotency key): the key is the operationId the console made when
-- it planned the write, so a replayed write can never create a second ticket. The UNIQUE
-- constraint is what enforces it, not a read before the insert.
CREATE TABLE tickets (
    ticket_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(tenant_id),
    order_id TEXT NOT NULL REFERENCES orders(order_id),
    category TEXT NOT NULL
        CHECK (category IN ('RETURN', 'EXCHANGE', 'REFUND', 'DAMAGED', 'MISSING_ITEM', 'OTHER')),
    description TEXT NOT NULL CHECK (length(description) BETWEEN 1 AND 500),
    status TEXT NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'IN_PROGRESS', 'CLOSED')),
    idempotency_key TEXT NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 200),
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (tenant_id, idempotency_key)
);
CREATE INDEX tickets_by_order ON tickets (tenant_id, order_id);
