-- A pool inside a PancakeSwap Infinity manager has packed `parameters` (its hook permissions in
-- the low 16 bits, then its tick spacing or bin step); null for other pools.
ALTER TABLE pools ADD COLUMN parameters text;
