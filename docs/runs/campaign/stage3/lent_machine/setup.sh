# sourced at the start of each device call
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .dev/sgfmill-*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/tmp/pipe.log 2>&1 || tail -5 /tmp/pipe.log
mkdir -p /tmp/bin
if ldd .dev/gnugo | grep -q "not found"; then
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/.dev exec %s/.dev/gnugo "$@"\n' "$PWD" "$PWD" > /tmp/bin/gnugo
else
  cp .dev/gnugo /tmp/bin/gnugo
fi
chmod +x /tmp/bin/gnugo; export PATH=/tmp/bin:$PATH
