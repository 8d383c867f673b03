"""Statistics: coefficients, correlation levels, confidence intervals, significance tests, rSYS-Delta on system pairs, ranking stability, input pools."""
