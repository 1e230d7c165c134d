-- TPROC-C delivery: the oldest undelivered order of each of the warehouse's 10 districts is
-- delivered: its new-order row goes, lines are dated, the customer is charged (4 %)
\set w_id random(1, :warehouses)
\set carrier random(1, 10)
BEGIN;
WITH oldest AS (SELECT no_d_id, min(no_o_id) AS o_id FROM new_order WHERE no_w_id = :w_id
                GROUP BY no_d_id),
     del AS (DELETE FROM new_order n USING oldest o WHERE n.no_w_id = :w_id
             AND n.no_d_id = o.no_d_id AND n.no_o_id = o.o_id RETURNING n.no_d_id, n.no_o_id),
     upd AS (UPDATE orders SET o_carrier_id = :carrier FROM del WHERE o_w_id = :w_id
             AND o_d_id = del.no_d_id AND o_id = del.no_o_id RETURNING o_d_id, o_id, o_c_id),
     ol AS (UPDATE order_line SET ol_delivery_d = now() FROM upd WHERE ol_w_id = :w_id
            AND ol_d_id = upd.o_d_id AND ol_o_id = upd.o_id
            RETURNING ol_d_id, ol_o_id, ol_amount),
     amt AS (SELECT u.o_d_id, u.o_c_id, sum(ol.ol_amount) AS total FROM upd u
             JOIN ol ON ol.ol_d_id = u.o_d_id AND ol.ol_o_id = u.o_id GROUP BY 1, 2)
UPDATE customer c SET c_balance = c_balance + amt.total, c_delivery_cnt = c_delivery_cnt + 1
  FROM amt WHERE c.c_w_id = :w_id AND c.c_d_id = amt.o_d_id AND c.c_id = amt.o_c_id;
END;
