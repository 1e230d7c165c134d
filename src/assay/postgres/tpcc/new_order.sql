-- TPROC-C new-order: a customer orders 5-15 items; stock is decremented (45 % of the mix)
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set c_id random(1, 3000)
\set ol_cnt random(5, 15)
BEGIN;
SELECT c_discount, c_last, c_credit FROM customer
  WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
SELECT w_tax FROM warehouse WHERE w_id = :w_id;
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = :w_id AND d_id = :d_id
  RETURNING d_next_o_id - 1 AS o_id, d_tax \gset
INSERT INTO orders VALUES (:w_id, :d_id, :o_id, :c_id, now(), NULL, :ol_cnt);
INSERT INTO new_order VALUES (:w_id, :d_id, :o_id);
WITH lines AS (SELECT n, 1 + (random() * 99999)::int AS i_id, 1 + (random() * 9)::int AS qty
               FROM generate_series(1, :ol_cnt) n),
     picked AS (SELECT DISTINCT ON (i_id) n, i_id, qty FROM lines ORDER BY i_id, n),
     locked AS (SELECT s_i_id FROM stock WHERE s_w_id = :w_id
                AND s_i_id IN (SELECT i_id FROM picked) ORDER BY s_i_id FOR UPDATE),
     st AS (UPDATE stock s SET s_quantity = CASE WHEN s_quantity - p.qty >= 10
                 THEN s_quantity - p.qty ELSE s_quantity - p.qty + 91 END,
                 s_ytd = s_ytd + p.qty, s_order_cnt = s_order_cnt + 1
            FROM picked p WHERE s.s_w_id = :w_id AND s.s_i_id = p.i_id
              AND s.s_i_id IN (SELECT s_i_id FROM locked)
            RETURNING p.n, p.i_id, p.qty, s.s_dist)
INSERT INTO order_line SELECT :w_id, :d_id, :o_id, st.n, st.i_id, :w_id, NULL, st.qty,
  st.qty * i.i_price, st.s_dist FROM st JOIN item i ON i.i_id = st.i_id;
END;
