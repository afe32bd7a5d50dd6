-- Embedded demo store, schema version 3: the demo data's names, places, carriers and events in
-- Chinese too (issue #41 §7). Applied after version 2, in one transaction, to a new store and to
-- an existing version 1 or 2 file alike. Statements end with a semicolon at the end of a line.
--
-- Each *_zh column sits beside its English column and is NULL where no Chinese is known: a row
-- added after the file was made keeps its text as written, and the tools then send no *Zh key.
-- A translation is set only where the English is still the demo's own, so a row somebody
-- renamed is never given the Chinese of its old name. Ids, statuses and codes have no *_zh.
ALTER TABLE order_items ADD COLUMN name_zh TEXT;
ALTER TABLE shipments ADD COLUMN carrier_zh TEXT;
ALTER TABLE shipments ADD COLUMN current_location_zh TEXT;
ALTER TABLE shipment_events ADD COLUMN location_zh TEXT;
ALTER TABLE shipment_events ADD COLUMN description_zh TEXT;
ALTER TABLE inventory ADD COLUMN name_zh TEXT;
ALTER TABLE inventory ADD COLUMN warehouse_zh TEXT;

CREATE TEMPORARY TABLE demo_zh (english TEXT PRIMARY KEY, chinese TEXT NOT NULL);
-- Products
INSERT INTO demo_zh VALUES ('Ceramic mug set', '陶瓷马克杯套装');
INSERT INTO demo_zh VALUES ('Bamboo cutting board', '竹制砧板');
INSERT INTO demo_zh VALUES ('Linen table runner', '亚麻桌旗');
INSERT INTO demo_zh VALUES ('Trail tent', '徒步帐篷');
-- Carriers
INSERT INTO demo_zh VALUES ('SF Express', '顺丰速运');
INSERT INTO demo_zh VALUES ('YTO Express', '圆通速递');
-- Places and warehouses
INSERT INTO demo_zh VALUES ('Shanghai Pudong Hub', '上海浦东转运中心');
INSERT INTO demo_zh VALUES ('Hangzhou Xihu Service Point', '杭州西湖服务点');
INSERT INTO demo_zh VALUES ('Shenzhen Nanshan Station', '深圳南山营业部');
INSERT INTO demo_zh VALUES ('Suzhou Warehouse', '苏州仓');
INSERT INTO demo_zh VALUES ('Shenzhen Warehouse', '深圳仓');
-- Shipment events
INSERT INTO demo_zh VALUES ('Picked up by carrier', '承运商已揽收');
INSERT INTO demo_zh VALUES ('Arrived at sorting hub', '已到达分拣中心');
INSERT INTO demo_zh VALUES ('Delivered, signed by customer', '已送达，客户已签收');
INSERT INTO demo_zh VALUES ('Out for delivery', '派送中');

UPDATE order_items SET name_zh = (SELECT chinese FROM demo_zh WHERE english = name);
UPDATE shipments SET carrier_zh = (SELECT chinese FROM demo_zh WHERE english = carrier),
    current_location_zh = (SELECT chinese FROM demo_zh WHERE english = current_location);
UPDATE shipment_events SET location_zh = (SELECT chinese FROM demo_zh WHERE english = location),
    description_zh = (SELECT chinese FROM demo_zh WHERE english = description);
UPDATE inventory SET name_zh = (SELECT chinese FROM demo_zh WHERE english = name),
    warehouse_zh = (SELECT chinese FROM demo_zh WHERE english = warehouse);
DROP TABLE demo_zh;
