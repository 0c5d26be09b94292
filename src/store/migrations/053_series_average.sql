-- tokenmarket schema, version 53: each USD series bucket keeps its volume-weighted average price
-- beside its exact sums (docs/PRICING.md, "USD series"): Σ p·v / Σ v rounded once, its close when
-- Σ v is 0, written with the sums, so that a line chart reads one double per hour instead of two
-- long exact sums to divide.
--
-- exact_quotient(num, den): the correctly rounded double of num / den, computed exactly. Postgres'
-- numeric division rounds to a scale of its own, and rounding that again to a double could land
-- on the wrong side of a halfway point. Here the quotient is truncated to 1,100 decimal places and
-- a last digit 1 is appended when the division left a remainder: every double and every halfway
-- point between two doubles (≥ 2^-1075) has at most 1,075 decimal places, so the exact quotient
-- and this decimal lie strictly between the same two of them (or are equal), and float8's
-- correctly rounding input (strtod) gives both the same double.
--
-- float8 input refuses a value that rounds to 0 or to ±Infinity (out of range): those are the
-- correctly rounded results then, by the magnitude of the quotient.
CREATE FUNCTION exact_quotient(num numeric, den numeric) RETURNS float8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  x numeric := num * 1e1100;
  q numeric := div(x, den);
BEGIN
  RETURN ((q * 10 + CASE WHEN x = q * den THEN 0 ELSE sign(x) * sign(den) END) * 1e-1101)::float8;
EXCEPTION WHEN numeric_value_out_of_range THEN
  RETURN sign(num) * sign(den) * CASE WHEN abs(num) > abs(den) THEN 'Infinity'::float8 ELSE 0 END;
END
$$;

ALTER TABLE token_usd_candles ADD COLUMN average float8;
UPDATE token_usd_candles
SET average = CASE WHEN sum_v_exact > 0 THEN exact_quotient(sum_pv_exact, sum_v_exact) ELSE close END;
ALTER TABLE token_usd_candles ALTER COLUMN average SET NOT NULL;
