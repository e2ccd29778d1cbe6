"""numkit: small numeric helpers: statistics, rounding, ranges, conversions and money."""
