"""The Engine facade: one game, one search, one evaluator, driven by protocol adapters.

Protocols translate lines into these calls and results back into lines; they hold no rules
or search logic. The search runs on its own thread so that a protocol thread can answer
``isready``, ``# interrupt`` or MQTT keep-alives while it thinks. Each method says whether
it blocks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from descent.engine.limits import Budget, Limits, TimeManager
from descent.engine.logsetup import get_logger
from descent.engine.models import resolve_model
from descent.engine.options import OPTIONS, Option, check_hash_mb
from descent.engine.settings import Settings
from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.registry import Game, make_game
from descent.search_cy.games.state import GameState, IllegalActionError
from descent.search_cy.search.api import (
    BEST_FIRST,
    SearchParams,
    SearchResult,
    SearchRunner,
    check_rave_value,
    make_search,
    search_plays,
)
from descent.search_cy.search.strength import choose_move, parse_strength


class EngineError(ValueError):
    """A request the engine refuses (illegal move, wrong phase); the position is unchanged."""


@dataclass(frozen=True)
class Info:
    """Search progress, as protocols print it (info lines, analyze output)."""

    nodes: int
    nps: float
    time: float
    value: float          # root value, player 0's view
    mover_value: float    # root value for the side to move, in [-1, 1] for the gain
    depth: int
    iterations: int
    pv: list[str]


@dataclass(frozen=True)
class Decision:
    """The move a search chose, with what protocols report about it."""

    action: int
    move: str
    value: float
    mover_value: float
    pv: list[str]
    nodes: int
    time: float
    depth: int
    resign: bool
    budget: Budget | None
    result: SearchResult | None = field(default=None, repr=False)


class Engine:
    """A game position plus the machinery to search it (see the module docstring)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.log = get_logger(component="engine")
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._stopper: Any = None
        # set by stop(), cleared by go(): a stop that falls between two analysis slices
        # (when no stopper is running) must still end the search
        self._stop_requested = threading.Event()
        self._ending = threading.Event()     # end_session(): every later search stops too
        self._decision: Decision | None = None
        self._error: BaseException | None = None
        self.time_manager = TimeManager(overhead=self.settings.move_overhead_ms / 1000.0)
        self.rng = np.random.default_rng(self.settings.seed)
        # a bad level or an impossible table fails at start, not at the first search
        parse_strength(self.settings.strength)
        check_hash_mb(self.settings.hash_mb)
        self.game: Game
        self.state: GameState
        self.evaluator: Evaluator
        self.evaluator_name: str
        self.terminal: str
        self.max_plies: int
        self.on_gpu: bool          # the network runs on a GPU (search threads gather batches)
        self.search_name: str
        self.search: SearchRunner
        self.policy_name: str      # the move-policy network's file ("" for none)
        self._commit(self._build(self.settings, "game"))

    # -- options (block only to stop a running search) ---------------------------------

    @property
    def options(self) -> Mapping[str, Option]:
        """The option table (engine/options.py): what protocols show and set."""
        return OPTIONS

    def option_value(self, name: str) -> Any:
        """The current value of an option (for ``search``, the one running when the
        setting leaves it to the game). Must not block."""
        if name == "search":
            return self.search_name
        return getattr(self.settings, self._option(name).name)

    def set_option(self, name: str, raw: object) -> None:
        """Sets an option and runs its change handler: a new game, evaluator or search is
        built before anything is replaced, so a bad value (a missing model file, a table
        that cannot be allocated) raises EngineError and leaves the engine as it was.
        Values read at ``go`` are only stored. Blocks until a running search stopped."""
        option = self._option(name)
        value = option.parse(raw)
        self.stop()
        self.wait()
        with self._lock:
            settings = replace(self.settings, **{option.name: value})
            try:
                built = self._build(settings, option.rebuild)
            except MemoryError as exc:
                raise EngineError(f"{option.name}={value}: not enough memory ({exc})") from exc
            self.settings = settings
            self._commit(built)
            if option.name == "seed":
                self.rng = np.random.default_rng(settings.seed)

    def _option(self, name: str) -> Option:
        option = OPTIONS.get(name)
        if option is None:
            raise EngineError(f"unknown option {name!r}; known: {', '.join(OPTIONS)}")
        return option

    def _build(self, settings: Settings, depth: str) -> dict[str, Any]:
        """The parts a change at ``depth`` replaces, built from ``settings`` without
        touching the engine (game -> evaluator -> search, each needing the one before)."""
        built: dict[str, Any] = {}
        if depth == "game":
            built.update(game=make_game(settings.game))
            built.update(state=built["game"].new_initial_state())
        game: Game = built.get("game") or self.game
        if depth in ("game", "evaluator"):
            built.update(self._make_evaluator(settings, game))
            scoring = built
        else:
            scoring = {"evaluator": self.evaluator, "terminal": self.terminal,
                       "max_plies": self.max_plies, "on_gpu": self.on_gpu}
        if depth in ("game", "evaluator", "search"):
            evaluator = scoring["evaluator"]
            terminal = scoring["terminal"]
            max_plies = scoring["max_plies"]
            network = str(built.get("evaluator_name", getattr(self, "evaluator_name", ""))
                          ).startswith("network:")
            search_name = settings.search or (
                game.network_search if network and game.network_search
                else game.default_search)
            if not search_plays(search_name, game.name):
                raise EngineError(f"search {search_name!r} does not play {game.name}")
            # the searches must value terminal states on the network's own scale: a
            # network trained with a depth heuristic predicts values in depth units
            # on a GPU the threads' expansions share backend calls (large batches); on
            # a CPU each thread's own calls, side by side, are faster
            params = SearchParams(hash_mb=settings.hash_mb, seed=settings.seed,
                                  terminal=terminal, max_plies=max_plies,
                                  threads=settings.threads, gather=scoring["on_gpu"])
            policy_name = ""
            if search_name == "rave":
                search = (self._rave_with_value(evaluator, settings, game, params) if network
                          else make_search(search_name, evaluator, params))
                policy_name = self._attach_policy(search, settings, game)
            else:
                evaluator, policy_name = self._action_values(evaluator, network,
                                                             search_name, settings, game)
                search = make_search(search_name, evaluator, params)
            built.update(search_name=search_name, search=search, policy_name=policy_name)
        return built

    @staticmethod
    def _load_policy(settings: Settings, game: Game) -> tuple[Any, str]:
        """The move-policy network (the setting's, else the shipped one for the board
        size) and its file name, or (None, "")."""
        from descent.engine.models import resolve_policy

        path = resolve_policy(settings.policy, game)
        if path is None:
            return None, ""
        from descent.nets.modelfile import ModelFileError
        from descent.nets.policy import load_policy

        try:
            return load_policy(str(path), game), path.name
        except ModelFileError as exc:
            raise EngineError(str(exc)) from None

    @classmethod
    def _attach_policy(cls, search: SearchRunner, settings: Settings, game: Game) -> str:
        """Gives ``rave`` its move-policy network and returns its file name ("" for
        none)."""
        policy, name = cls._load_policy(settings, game)
        if policy is not None:
            impl: Any = search.impl
            impl.policy = policy
            impl.policy_at = settings.policy_at
            impl.policy_weight = settings.policy_weight
            impl.action_visits = settings.action_visits
            impl.minimax_weight = settings.minimax_weight
        return name

    @classmethod
    def _action_values(cls, evaluator: Evaluator, network: bool, search_name: str,
                       settings: Settings, game: Game) -> tuple[Evaluator, str]:
        """The evaluator of a search other than ``rave``, and the policy file it reads
        ("" for none): a best-first search over the Hex heuristic values its expansions'
        children by a policy network's action values (eval/hex_actions.pyx), when the
        policy (the setting's, else the shipped one) has value heads. A policy named for a
        search that cannot read it is an error. ``network``: the evaluator is a network
        model's."""
        from descent.search_cy.eval.evaluator import HeuristicEvaluator

        # a network model (even one computed in C, a HeuristicEvaluator too) values the
        # children itself: the action values are for the heuristic's searches only
        if search_name not in BEST_FIRST or network \
                or not isinstance(evaluator, HeuristicEvaluator):
            if settings.policy and settings.policy.lower() != "none":
                reader = ("a network model's search" if search_name in BEST_FIRST
                          else search_name)
                raise EngineError(f"policy={settings.policy}: a move-policy network guides "
                                  "rave, and its value heads the best-first searches over "
                                  f"the Hex heuristic (model=none), not {reader}")
            return evaluator, ""
        policy, name = cls._load_policy(settings, game)
        if policy is None:
            return evaluator, ""
        if not policy.has_values:
            if settings.policy:
                raise EngineError(f"policy={settings.policy}: {search_name} reads a policy "
                                  "network's action values, and this one has no value "
                                  "heads (nets/arch.py policy_value)")
            return evaluator, ""
        from descent.search_cy.eval.hex_actions import HexActionEvaluator

        return HexActionEvaluator(policy, evaluator), name

    @staticmethod
    def _rave_with_value(network: Evaluator, settings: Settings, game: Game,
                         params: SearchParams) -> SearchRunner:
        """``rave`` with a model: the search keeps the Hex heuristic's knowledge and its
        playouts, and the network gives the children of every node it reaches enough
        visits virtual visits at its odds (RaveSearch.value): a network in C at 20
        visits, any other in one batch call a node at DEFAULT_VALUE_AT_BATCH. A network in
        C also values every simulation's leaf where ``value_mix`` asks it to."""
        from descent.search_cy.eval.evaluator import HeuristicEvaluator
        from descent.search_cy.eval.heuristics import heuristic_for
        from descent.search_cy.search.rave import DEFAULT_VALUE_AT_BATCH

        try:
            check_rave_value(network)
        except ValueError as exc:
            raise EngineError(str(exc)) from None
        prototype = game.new_initial_state()
        search = make_search("rave", heuristic_for(prototype, settings.heuristic or None,
                                                   settings.heuristic_weights), params)
        rave: Any = search.impl
        rave.value, rave.value_visits = network, settings.value_visits
        if isinstance(network, HeuristicEvaluator):
            rave.value_mix = settings.value_mix
            rave.value_fade = settings.value_fade
        else:
            rave.value_at = DEFAULT_VALUE_AT_BATCH
            rave.value_mix = 0.0          # a network called in batches values no leaf
        return search

    def _commit(self, built: dict[str, Any]) -> None:
        for name, value in built.items():
            setattr(self, name, value)

    def _make_evaluator(self, settings: Settings, game: Game) -> dict[str, Any]:
        model = resolve_model(settings.model, game)
        prototype = game.new_initial_state()
        if model is not None:
            from descent.nets.evaluator import network_evaluator  # heavy imports on demand
            from descent.nets.modelfile import load_model
            from descent.search_cy.search.api import TERMINAL_KINDS

            if settings.heuristic_weights:
                raise ValueError("heuristic_weights weigh the heuristic evaluator, and this "
                                 f"engine evaluates with the network {model} (model=none "
                                 "plays the heuristic)")
            loaded = load_model(str(model), prototype)
            depth_scaled = loaded.value.heuristic in TERMINAL_KINDS
            evaluator = network_evaluator(loaded, prototype, backend=settings.backend)
            backend = getattr(getattr(evaluator, "fn", None), "backend", None)
            return {"evaluator": evaluator,
                    "evaluator_name": f"network:{model}",
                    "on_gpu": str(getattr(backend, "device", "cpu")).startswith("cuda"),
                    "terminal": loaded.value.heuristic if depth_scaled else "gain",
                    "max_plies": loaded.value.max_plies if depth_scaled else 0}
        from descent.search_cy.eval.heuristics import heuristic_for, heuristic_name

        evaluator = heuristic_for(prototype, settings.heuristic or None,
                                  settings.heuristic_weights)
        return {"evaluator": evaluator, "on_gpu": False,
                "evaluator_name": f"heuristic:{heuristic_name(prototype, evaluator)}",
                "terminal": "gain", "max_plies": 0}

    def describe(self) -> dict[str, Any]:
        """Start-up facts for logs and ``version`` replies (``action_visits`` and
        ``minimax_weight``: how rave reads the policy's action values, 0 where it has no
        value heads; ``value_visits``: the virtual visits rave's value network gives
        children, 0 where it reads none; ``value_mix``: the share of rave's leaf values in
        a score, 0 where it reads no network in C, and ``value_fade`` the child visits that
        halve it;
        ``evaluator``: ``action-values:<policy>+<heuristic>`` where a best-first search
        values children by them). Must not block."""
        policy = getattr(self.search.impl, "policy", None)
        values = getattr(policy, "has_values", False)
        actions = int(getattr(self.search.impl, "action_visits", 0)) if values else 0
        minimax = float(getattr(self.search.impl, "minimax_weight", 0.0)) if values else 0.0
        evaluator = self.evaluator_name
        mix = float(getattr(self.search.impl, "value_mix", 0.0))
        valued = getattr(self.search.impl, "value", None) is not None   # rave's network
        if self.search.evaluator is not self.evaluator and self.search_name != "rave":
            # (rave keeps the heuristic for its knowledge and reads the network beside it)
            evaluator = f"action-values:{self.policy_name}+{evaluator}"
        return {"game": self.game.spec, "search": self.search_name,
                "evaluator": evaluator, "policy": self.policy_name,
                "action_visits": actions, "minimax_weight": minimax,
                "value_visits": int(getattr(self.search.impl, "value_visits", 0)) if valued else 0,
                "value_mix": mix,
                "value_fade": float(getattr(self.search.impl, "value_fade", 0.0)) if mix else 0.0,
                "hash_mb": self.settings.hash_mb,
                "strength": self.settings.strength, "seed": self.settings.seed}

    # -- position (block only to stop a running search) --------------------------------

    def new_game(self, game: str | None = None) -> None:
        """A new game (optionally of another game spec) at its initial position. Blocks
        until a running search has stopped."""
        if game is not None and make_game(game).spec != self.game.spec:
            self.set_option("game", game)
        self.stop()
        self.wait()
        with self._lock:
            self.state = self.game.new_initial_state()
            self.search.clear()
            self.rng = np.random.default_rng(self.settings.seed)

    def set_position(self, text: str | None, moves: list[str] | tuple[str, ...] = ()) -> None:
        """Sets the position from the game's text notation (None: the initial position),
        then plays ``moves``. On any error the previous position is kept. Blocks until a
        running search has stopped."""
        self.stop()
        self.wait()
        with self._lock:
            try:
                state = self.game.new_initial_state() if text is None \
                    else self.game.state_from_text(text)
                for move in moves:
                    state.apply_move(move)
            except ValueError as exc:
                raise EngineError(str(exc)) from exc
            self.state = state

    def play(self, move: str) -> int:
        """Plays a move (or a chance outcome) given in the game's notation; returns its
        action id. An illegal move raises EngineError and changes nothing. Blocks until a
        running search has stopped."""
        self.stop()
        self.wait()
        with self._lock:
            try:
                return self.state.apply_move(move)
            except (IllegalActionError, ValueError) as exc:
                raise EngineError(str(exc)) from exc

    def play_action(self, action: int) -> None:
        """Plays an action id (checked). Blocks until a running search has stopped."""
        self.stop()
        self.wait()
        with self._lock:
            try:
                self.state.apply_action(action)
            except (IllegalActionError, ValueError) as exc:
                raise EngineError(str(exc)) from exc

    def undo(self) -> None:
        """Takes back the last action; EngineError when there is none. Blocks until a
        running search has stopped."""
        self.stop()
        self.wait()
        with self._lock:
            try:
                self.state.undo()
            except IndexError as exc:
                raise EngineError("nothing to undo") from exc

    # -- search --------------------------------------------------------------------

    def go(self, limits: Limits, on_info: Callable[[Info], None] | None = None,
           on_done: Callable[[Decision], None] | None = None,
           on_error: Callable[[BaseException], None] | None = None) -> None:
        """Starts searching the current position. Must not block: returns at once; the
        decision goes to ``on_done`` (on the search thread) and to ``wait()``; a failure
        goes to ``on_error`` (or is re-raised by ``wait()`` when none is given)."""
        if self.searching:
            raise EngineError("a search is already running")
        if self.state.is_terminal():
            raise EngineError("the game is over")
        if self.state.is_chance_node():
            raise EngineError("the position waits for a chance outcome (a die roll)")
        moves_played = self.state.ply
        # values read at go: a change between two searches needs no rebuild
        self.time_manager.overhead = self.settings.move_overhead_ms / 1000.0
        strength = parse_strength(self.settings.strength)
        stopper, budget = self.time_manager.stopper(
            limits, moves_played, self.settings.nodes_per_second or None)
        self._stop_requested.clear()
        if self._ending.is_set():
            # a command queued before the session's end (a genmove before quit) still
            # answers, at once
            stopper.stop()
            self._stop_requested.set()
        self._stopper = stopper
        self._decision = None
        self._error = None
        root = self.state.clone()

        def work() -> None:
            try:
                decision = self._search(root, stopper, budget, limits, strength, on_info)
                self._decision = decision
                if on_done is not None:
                    on_done(decision)
            except BaseException as exc:   # the thread must not die silently
                self.log.error("search_failed", error=repr(exc))
                if on_error is not None:
                    on_error(exc)
                else:
                    self._error = exc

        self._thread = threading.Thread(target=work, name="descent-search", daemon=True)
        self._thread.start()

    def _search(self, root: GameState, stopper: Any, budget: Budget | None, limits: Limits,
                strength: float | None, on_info: Callable[[Info], None] | None) -> Decision:
        infinite = limits.infinite or (budget is None and limits.nodes is None
                                       and limits.iterations is None and limits.depth is None
                                       and stopper.max_nodes == 0)
        search = self.search
        if limits.depth is not None:
            if self.search_name == "expectiminimax":
                # a capped copy for this run only; it shares the evaluator, not the table
                search = make_search(self.search_name, self.evaluator, replace(
                    self.search.params, max_depth=limits.depth))
            elif budget is None and limits.nodes is None and limits.iterations is None:
                # best-first searches have no depth: a depth request gets as many
                # iterations as a depth-limited search would roughly expand
                stopper = type(stopper)(iterations=max(1, limits.depth) * 100)
                self._stopper = stopper
        started = time.perf_counter()
        if infinite and on_info is not None:
            result = self._search_in_slices(root, stopper, on_info)
        else:
            result = search.run(root, stopper)
        elapsed = time.perf_counter() - started
        action = result.action
        if strength is not None:
            action = choose_move(self.search, root, result, self.settings.strength, self.rng)
        mover = root.current_player()
        mover_value = result.value if mover == 0 else -result.value
        info = Info(result.nodes, result.nodes / elapsed if elapsed > 0 else 0.0, elapsed,
                    result.value, mover_value, result.depth, result.iterations,
                    self._pv_text(root, result.pv if action == result.action else [action]))
        if on_info is not None:
            on_info(info)
        resign = (self.settings.resign_threshold > 0
                  and mover_value < -self.settings.resign_threshold)
        decision = Decision(action, root.action_to_string(action), result.value, mover_value,
                            info.pv, result.nodes, elapsed, result.depth, resign, budget, result)
        self.log.info("move", game=self.game.spec, ply=root.ply, move=decision.move,
                      value=round(result.value, 4), nodes=result.nodes,
                      nps=round(info.nps), time=round(elapsed, 4), depth=result.depth,
                      iterations=result.iterations, stop=result.stop_reason,
                      resolved=result.resolved, evaluations=result.evaluations,
                      budget=None if budget is None else [round(budget.minimum, 4),
                                                          round(budget.target, 4),
                                                          round(budget.maximum, 4)],
                      search=self.search_name)
        return decision

    def _search_in_slices(self, root: GameState, stopper: Any,
                          on_info: Callable[[Info], None]) -> SearchResult:
        """Until stop(): half-second searches that keep their tree, with progress between."""
        from descent.search_cy.search.stopper import Stopper

        total_nodes = 0
        started = time.perf_counter()
        while True:
            piece = Stopper(time=0.5)
            self._stopper = piece
            if self._stop_requested.is_set():
                piece.stop()
            result = self.search.run(root, piece)
            total_nodes += result.nodes
            elapsed = time.perf_counter() - started
            mover_value = result.value if root.current_player() == 0 else -result.value
            on_info(Info(total_nodes, total_nodes / elapsed if elapsed else 0.0, elapsed,
                         result.value, mover_value, result.depth, result.iterations,
                         self._pv_text(root, result.pv)))
            if (piece.reason_name in ("stopped", "resolved", "memory") or stopper.reason != 0
                    or self._stop_requested.is_set()):
                return replace(result, nodes=total_nodes, time=elapsed)

    def _pv_text(self, root: GameState, pv: list[int]) -> list[str]:
        out = []
        state = root.clone()
        for action in pv:
            try:
                out.append(state.action_to_string(action))
                state.apply_action(action)
            except ValueError:
                break
            if state.is_terminal():
                break
        return out

    def stop(self) -> None:
        """Asks a running search to stop at its next poll. Must not block."""
        self._stop_requested.set()
        stopper = self._stopper
        if stopper is not None:
            stopper.stop()

    def end_session(self) -> None:
        """The session is ending (quit, end of input, SIGTERM): the running search stops,
        and so does any search started afterwards by a command read before the end, which
        then answers at once instead of thinking for its whole clock. Must not block."""
        self._ending.set()
        self.stop()

    def wait(self, timeout: float | None = None) -> Decision | None:
        """Waits for the running search and returns its decision (None when none ran).
        Blocks. Re-raises an error the search thread hit."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                return None
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._decision

    @property
    def searching(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def think(self, limits: Limits) -> Decision:
        """go + wait: the decision for the current position. Blocks."""
        self.go(limits)
        decision = self.wait()
        assert decision is not None
        return decision
