-- TPC-C-like schema and data (HammerDB TPROC-C cardinalities), generated in the server.
-- :warehouses is set by assay; every table holds what TPC-C's initial population holds:
-- 100,000 items; per warehouse 100,000 stock rows, 10 districts, 30,000 customers,
-- 30,000 orders (the last 900 of each district undelivered), about 300,000 order lines.
DROP TABLE IF EXISTS warehouse, district, customer, history, item, stock, orders, new_order,
  order_line;
CREATE TABLE warehouse (w_id int PRIMARY KEY, w_name text, w_tax numeric(4,4),
  w_ytd numeric(12,2)) WITH (fillfactor = 50);
CREATE TABLE district (d_w_id int, d_id int, d_name text, d_tax numeric(4,4),
  d_ytd numeric(12,2), d_next_o_id int) WITH (fillfactor = 50);
CREATE TABLE customer (c_w_id int, c_d_id int, c_id int, c_last text, c_credit char(2),
  c_discount numeric(4,4), c_balance numeric(12,2), c_ytd_payment numeric(12,2),
  c_payment_cnt int, c_delivery_cnt int, c_data varchar(500));
CREATE TABLE history (h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int,
  h_date timestamp, h_amount numeric(6,2), h_data text);
CREATE TABLE item (i_id int, i_name text, i_price numeric(5,2), i_data text);
CREATE TABLE stock (s_w_id int, s_i_id int, s_quantity int, s_ytd int, s_order_cnt int,
  s_remote_cnt int, s_dist char(24), s_data text);
CREATE TABLE orders (o_w_id int, o_d_id int, o_id int, o_c_id int, o_entry_d timestamp,
  o_carrier_id int, o_ol_cnt int);
CREATE TABLE new_order (no_w_id int, no_d_id int, no_o_id int);
CREATE TABLE order_line (ol_w_id int, ol_d_id int, ol_o_id int, ol_number int, ol_i_id int,
  ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6,2),
  ol_dist_info char(24));

INSERT INTO item SELECT i, 'item-' || i, 1 + random() * 99, md5(i::text) || md5((-i)::text)
  FROM generate_series(1, 100000) i;
INSERT INTO warehouse SELECT w, 'warehouse-' || w, random() * 0.2, 300000
  FROM generate_series(1, :warehouses) w;
INSERT INTO district SELECT w, d, 'district-' || d, random() * 0.2, 30000, 3001
  FROM generate_series(1, :warehouses) w, generate_series(1, 10) d;
INSERT INTO customer SELECT w, d, c, 'name-' || (c % 1000),
  CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, random() * 0.5, -10, 10, 1, 0,
  repeat(md5(c::text), 10)
  FROM generate_series(1, :warehouses) w, generate_series(1, 10) d, generate_series(1, 3000) c;
INSERT INTO history SELECT c_id, c_d_id, c_w_id, c_d_id, c_w_id, now(), 10, 'initial'
  FROM customer;
INSERT INTO stock SELECT w, i, 10 + (random() * 90)::int, 0, 0, 0, md5(i::text)::char(24),
  md5((i * w)::text) || md5(w::text)
  FROM generate_series(1, :warehouses) w, generate_series(1, 100000) i;
INSERT INTO orders SELECT w, d, o, 1 + (o * 7919) % 3000, now(),
  CASE WHEN o < 2101 THEN 1 + (o % 10) END, 10
  FROM generate_series(1, :warehouses) w, generate_series(1, 10) d, generate_series(1, 3000) o;
INSERT INTO new_order SELECT w, d, o
  FROM generate_series(1, :warehouses) w, generate_series(1, 10) d,
       generate_series(2101, 3000) o;
INSERT INTO order_line SELECT o_w_id, o_d_id, o_id, n, 1 + ((o_id * 31 + n * 7717) % 100000),
  o_w_id, CASE WHEN o_id < 2101 THEN o_entry_d END, 5,
  CASE WHEN o_id < 2101 THEN 0 ELSE round((random() * 9999)::numeric / 100, 2) END,
  md5(n::text)::char(24)
  FROM orders, generate_series(1, 10) n;

ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id);
ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
ALTER TABLE item ADD PRIMARY KEY (i_id);
ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id);
ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
VACUUM ANALYZE;
CHECKPOINT;
