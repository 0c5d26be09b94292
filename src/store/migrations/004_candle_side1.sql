-- tokenmarket schema, version 4: the token1 side of pool candles, stored.
--
-- Side 1 (token1 in token0) used to be served as 1 / open, 1 / low … of the stored side-0 doubles:
-- the reciprocal of a rounded double is off by 1–2 units in the last place for many candles. Each
-- trade's side-1 price is now rounded once from its exact ratio and folded into these columns.
-- Existing rows keep their data: they are filled with the reciprocals they were served with until
-- then (the exact values need the swaps; a bucket rebuilt or grown from now on gets them).
ALTER TABLE candles
  ADD COLUMN open1  double precision,
  ADD COLUMN high1  double precision,
  ADD COLUMN low1   double precision,
  ADD COLUMN close1 double precision;

UPDATE candles SET open1 = 1 / open, high1 = 1 / low, low1 = 1 / high, close1 = 1 / close;

ALTER TABLE candles
  ALTER COLUMN open1 SET NOT NULL,
  ALTER COLUMN high1 SET NOT NULL,
  ALTER COLUMN low1 SET NOT NULL,
  ALTER COLUMN close1 SET NOT NULL;
