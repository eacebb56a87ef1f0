"""Play campaign19 generation 14's pachi9 anchor out to its 50 games in this folder (rule.txt), with the loop's own
line code and no stop: ``python3 docs/strength/pachi9g14full/play.py`` from the repository root, the run folder
``runs/campaign19`` (git-ignored) holding generation 14's networks. Writes nothing into the run's state."""

from azgo.training.recipe import load_recipe
from azgo.training.recipe_run import RecipeRun

run = RecipeRun(load_recipe("recipes/campaign19.toml"), "runs/campaign19")
run.log = print
anchor = next(a for a in run.r.anchors if a.name == "pachi9")
s = run._line(14, anchor, "docs/strength/pachi9g14full/pachi9")
print(s.meta["command"])
