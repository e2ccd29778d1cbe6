import sys
exec(open("/tmp/ov3/passes.py").read().split("for f in (names_pass")[0])
which = sys.argv[1]; n = int(sys.argv[2])
f = {"names": names_pass, "codes": codes_pass, "none": lambda: True}[which]
for _ in range(n): f()
