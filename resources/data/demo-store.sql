-- Embedded demo store, schema version 1. Executed once, in one transaction, when the store
-- file is created. Statements end with a semicolon at the end of a line.
CREATE TABLE tenants (
    tenant_id TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE staff (
    user_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(tenant_id),
    display_name TEXT NOT NULL
);
CREATE TABLE orders (
    order_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(tenant_id),
    status TEXT NOT NULL CHECK (status IN ('PENDING_PAYMENT', 'PAID', 'SHIPPED', 'DELIVERED', 'CANCELLED')),
    created_at TEXT NOT NULL,
    total_amount TEXT NOT NULL,
    currency TEXT NOT NULL
);
CREATE TABLE order_items (
    order_id TEXT NOT NULL REFERENCES orders(order_id),
    sku TEXT NOT NULL,
    name TEXT NOT NULL,
    quantity INTEGER NOT NULL
);
CREATE TABLE shipments (
    order_id TEXT PRIMARY KEY REFERENCES orders(order_id),
    carrier TEXT NOT NULL,
    tracking_number TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED')),
    current_location TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE shipment_events (
    order_id TEXT NOT NULL REFERENCES shipments(order_id),
    happened_at TEXT NOT NULL,
    location TEXT NOT NULL,
    description TEXT NOT NULL
);
CREATE TABLE inventory (
    tenant_id TEXT NOT NULL REFERENCES tenants(tenant_id),
    sku TEXT NOT NULL,
    name TEXT NOT NULL,
    available INTEGER NOT NULL CHECK (available >= 0),
    low_stock_threshold INTEGER NOT NULL,
    warehouse TEXT NOT NULL,
    PRIMARY KEY (tenant_id, sku)
);

INSERT INTO tenants VALUES ('t-acme', 'Acme Home');
INSERT INTO tenants VALUES ('t-globex', 'Globex Outdoor');
INSERT INTO staff VALUES ('u-1001', 't-acme', 'Lin Wei');
INSERT INTO staff VALUES ('u-1002', 't-acme', 'Chen Jing');
INSERT INTO staff VALUES ('u-2001', 't-globex', 'Sam Porter');

-- A1001: shipped, with logistics. A1002: paid, no logistics yet. A1003: delivered.
INSERT INTO orders VALUES ('A1001', 't-acme', 'SHIPPED', '2026-11-24', '299.00', 'CNY');
INSERT INTO orders VALUES ('A1002', 't-acme', 'PAID', '2026-11-27', '89.90', 'CNY');
INSERT INTO orders VALUES ('A1003', 't-acme', 'DELIVERED', '2026-11-15', '1299.00', 'CNY');
INSERT INTO orders VALUES ('A1004', 't-acme', 'CANCELLED', '2026-11-10', '45.00', 'CNY');
INSERT INTO orders VALUES ('A2001', 't-globex', 'SHIPPED', '2026-11-25', '560.00', 'CNY');
INSERT INTO order_items VALUES ('A1001', 'SKU-100', 'Ceramic mug set', 2);
INSERT INTO order_items VALUES ('A1001', 'SKU-200', 'Bamboo cutting board', 1);
INSERT INTO order_items VALUES ('A1002', 'SKU-300', 'Linen table runner', 1);
INSERT INTO order_items VALUES ('A1003', 'SKU-100', 'Ceramic mug set', 1);
INSERT INTO order_items VALUES ('A1004', 'SKU-200', 'Bamboo cutting board', 1);
INSERT INTO order_items VALUES ('A2001', 'SKU-900', 'Trail tent', 1);
INSERT INTO shipments VALUES ('A1001', 'SF Express', 'SF10010001', 'IN_TRANSIT', 'Shanghai Pudong Hub', '2026-11-28T09:30:00');
INSERT INTO shipments VALUES ('A1003', 'SF Express', 'SF10030003', 'DELIVERED', 'Hangzhou Xihu Service Point', '2026-11-18T15:10:00');
INSERT INTO shipments VALUES ('A2001', 'YTO Express', 'YT20010001', 'OUT_FOR_DELIVERY', 'Shenzhen Nanshan Station', '2026-11-28T08:05:00');
INSERT INTO shipment_events VALUES ('A1001', '2026-11-25T18:00:00', 'Suzhou Warehouse', 'Picked up by carrier');
INSERT INTO shipment_events VALUES ('A1001', '2026-11-28T09:30:00', 'Shanghai Pudong Hub', 'Arrived at sorting hub');
INSERT INTO shipment_events VALUES ('A1003', '2026-11-16T10:00:00', 'Suzhou Warehouse', 'Picked up by carrier');
INSERT INTO shipment_events VALUES ('A1003', '2026-11-18T15:10:00', 'Hangzhou Xihu Service Point', 'Delivered, signed by customer');
INSERT INTO shipment_events VALUES ('A2001', '2026-11-28T08:05:00', 'Shenzhen Nanshan Station', 'Out for delivery');
INSERT INTO inventory VALUES ('t-acme', 'SKU-100', 'Ceramic mug set', 120, 10, 'Suzhou Warehouse');
INSERT INTO inventory VALUES ('t-acme', 'SKU-200', 'Bamboo cutting board', 3, 10, 'Suzhou Warehouse');
INSERT INTO inventory VALUES ('t-acme', 'SKU-300', 'Linen table runner', 0, 10, 'Suzhou Warehouse');
INSERT INTO inventory VALUES ('t-globex', 'SKU-900', 'Trail tent', 14, 5, 'Shenzhen Warehouse');
