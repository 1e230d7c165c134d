-- TPROC-C stock-level: items of the district's last 20 orders whose stock is low (4 %)
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set threshold random(10, 20)
BEGIN;
SELECT count(DISTINCT s_i_id) FROM district, order_line, stock
  WHERE d_w_id = :w_id AND d_id = :d_id AND ol_w_id = :w_id AND ol_d_id = :d_id
    AND ol_o_id < d_next_o_id AND ol_o_id >= d_next_o_id - 20
    AND s_w_id = :w_id AND s_i_id = ol_i_id AND s_quantity < :threshold;
END;
