# sourced by the device scripts: azgo and sgfmill from the carried wheels
export PYTHONUNBUFFERED=1
if [ ! -d /tmp/site/azgo/engine ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .dev/whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
