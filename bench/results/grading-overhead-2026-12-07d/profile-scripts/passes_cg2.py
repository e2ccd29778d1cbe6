import sys
exec(open("/tmp/ov3/passes.py").read().split("for f in (names_pass")[0])
from operator import is_
import operator
which = sys.argv[1]; n = int(sys.argv[2])
vl = list(values)
fs = {
 "isnot": lambda: not any(map(is_not, values, values)),
 "getters": lambda: tuple(chain.from_iterable(map(apply, getters, namespaces))),
 "tupleeq": lambda: values == values[:],
 "getcode": lambda: tuple(map(getcode, functions)),
 "none": lambda: True,
}
f = fs[which]
for _ in range(n): f()
