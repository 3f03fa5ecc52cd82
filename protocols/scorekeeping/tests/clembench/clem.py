"""
Runs clemcore's own command line (`clem score`, `clem transcribe`, `clem eval`) on a results folder,
for tests/integration/clembench-tools.test.ts. clemcore and clembench are not installed here: the test
points PYTHONPATH at a clemcore checkout and CLEMBENCH_HOME at a clembench checkout.

clemcore imports, at start-up, packages that scoring, transcribing and evaluating never use (model
back-ends, PettingZoo, OpenEnv, PyLaTeX ...). Where one is missing, a stand-in module answers its
imports; the code that reads and writes the results folder is clemcore's own, unchanged. PyLaTeX's
`escape_latex` (used for the .tex transcript) becomes the identity.

`clem.py play <game> <results_dir>` plays every instance of the game's in/instances.json with clemcore's
"mock" model through the game's own master and clemcore's file callbacks, in a plain loop (clemcore's
runner needs PettingZoo): what `clem run -g <game> -m mock` writes, without run.json.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

OPTIONAL = {"openenv", "openenv_core", "pettingzoo", "gymnasium", "pylatex", "datasets", "uvicorn", "fastapi",
            "sparklines", "openai", "anthropic", "cohere", "mistralai", "google", "httpx", "requests"}


class _StandIn(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(name)

    def __getitem__(cls, item):
        return cls

    def __call__(cls, *args, **kwargs):
        if cls.__dict__.get("_stand_in"):  # used as a decorator or a factory
            return args[0] if args and callable(args[0]) else object.__new__(cls)
        return type.__call__(cls, *args, **kwargs)


def _stand_in(name):
    return _StandIn(name, (object,), {"_stand_in": True})


class _Module(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "escape_latex":
            return lambda text: text
        return _stand_in(name)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        top = fullname.split(".")[0]
        if top not in OPTIONAL:
            return None
        if top in sys.modules:  # a stand-in's submodule is a stand-in; a real package's is real
            return self._spec(fullname) if isinstance(sys.modules[top], _Module) else None
        sys.meta_path.remove(self)
        try:
            real = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            real = None
        finally:
            sys.meta_path.insert(0, self)
        return None if real is not None else self._spec(fullname)  # installed: use it

    def _spec(self, fullname):
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _Module(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())

def play(game_name, results_dir):
    import json
    import random
    from pathlib import Path

    from clemcore import backends
    from clemcore.backends import Model
    from clemcore.clemgame import (ExperimentFileSaver, GameBenchmark, GameBenchmarkCallbackList, GameRegistry,
                                   InstanceFileSaver, InteractionsFileSaver, ResultsFolder)

    random.seed(7)  # the mock answerer's replies are random
    spec = GameRegistry.from_directories_and_cwd_files().get_game_specs_that_unify_with(game_name)[0]
    models = backends.load_models(["mock"], {"temperature": 0.0, "max_tokens": 100})
    folder = ResultsFolder(Path(results_dir), run_dir=Model.to_identifier(models))
    infos = Model.to_infos(models)
    callbacks = GameBenchmarkCallbackList([InstanceFileSaver(folder),
                                           ExperimentFileSaver(folder, player_model_infos=infos),
                                           InteractionsFileSaver(folder, player_model_infos=infos)])
    with open(os.path.join(spec.game_path, "in", "instances.json"), encoding="utf-8") as f:
        experiments = json.load(f)["experiments"]
    with GameBenchmark.load_from_spec(spec) as benchmark:
        for experiment in experiments:
            for instance in experiment["game_instances"]:
                master = benchmark.create_game_master(experiment, models)
                master.setup(**instance)
                callbacks.on_game_start(master, instance)
                master.before_game()
                done = False
                while not done:  # as clemcore's runner: the first player is asked even if the game is over
                    player = master.current_player
                    done, _ = master.step(player(master.get_context_for(player)))
                callbacks.on_game_end(master, instance)


if __name__ == "__main__":
    if sys.argv[1:2] == ["play"]:
        play(*sys.argv[2:4])
    else:
        from clemcore.cli import main

        main()
