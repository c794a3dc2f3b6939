#!/usr/bin/env bash
# The matches behind docs/results/networks.md's rows for the trained networks. Each
# network plays with the search the engine gives it by default; "heuristic" is the same
# search with the C heuristic (model=none) at the same time per move. OpenSpiel's MCTS
# bots take a number of simulations, not a clock: HEX_SIMS / EWN_SIMS are set so that
# their mean time per move (printed by descent/research/move_times.py from the records)
# matches the time per move.
# Run it from the repository root: the OpenSpiel bots are test helpers (tests/helpers/bots).
#
#   bash configs/train/evaluate.sh OUT_DIR HEX7.dnet EINSTEIN.dnet DICECHESS.dnet [HEX11.dnet]
#   ONLY="einstein dicechess" bash configs/train/evaluate.sh ...    # some games only
set -euo pipefail
out=${1:?output folder}
hex=${2:?Hex 7x7 model}
ewn=${3:?EinStein model}
dc=${4:?dice chess model}
hex11=${5:-}
HEX_SIMS=${HEX_SIMS:-450}
HEX11_SIMS=${HEX11_SIMS:-120}
EWN_SIMS=${EWN_SIMS:-280}
JOBS=${JOBS:-2}
PY=${PYTHON:-python}
mkdir -p "$out"

ONLY=${ONLY:-hex einstein dicechess${hex11:+ hex11}}
arena() { "$PY" -m descent arena --quiet -j "$JOBS" "$@"; }
wanted() { [[ " $ONLY " == *" $1 "* ]]; }

# Hex 7x7: every one-move opening with each colour (98 games), 200 ms a move
if wanted hex; then
arena "net@descent:search=ubfms,model=$hex" "heuristic@descent:search=ubfms,model=none" \
    --game "hex(size=7)" --games 98 --openings all-1 --tc 200ms --out "$out/hex7-heuristic" \
    | tee "$out/hex7-heuristic.txt"
arena "net@descent:search=ubfms,model=$hex" \
    "openspiel-mcts@gtp:$PY -m tests.helpers.bots.hex_openspiel_gtp --size 7 --simulations $HEX_SIMS" \
    --game "hex(size=7)" --games 40 --openings all-1 --tc 200ms --out "$out/hex7-mcts" \
    | tee "$out/hex7-mcts.txt"
fi

# Hex 11x11: 40 one-move openings (of 121) with each colour, 200 ms a move
if wanted hex11; then
arena "net@descent:search=ubfms,model=${hex11:?Hex 11x11 model}" \
    "heuristic@descent:search=ubfms,model=none" \
    --game "hex(size=11)" --games 80 --openings all-1 --tc 200ms --out "$out/hex11-heuristic" \
    | tee "$out/hex11-heuristic.txt"
arena "net@descent:search=ubfms,model=$hex11" \
    "openspiel-mcts@gtp:$PY -m tests.helpers.bots.hex_openspiel_gtp --size 11 --simulations $HEX11_SIMS" \
    --game "hex(size=11)" --games 40 --openings all-1 --tc 200ms --out "$out/hex11-mcts" \
    | tee "$out/hex11-mcts.txt"
fi

# EinStein: set-ups and dice shared by each pair of games, 100 ms a move
if wanted einstein; then
arena "net@descent:search=expectiminimax,model=$ewn" \
    "heuristic@descent:search=expectiminimax,model=none" \
    --game einstein --games 120 --tc 100ms --out "$out/einstein-heuristic" \
    | tee "$out/einstein-heuristic.txt"
arena "net@descent:search=expectiminimax,model=$ewn" \
    "openspiel-mcts@ewn:$PY -m tests.helpers.bots.einstein_openspiel_ewn --policy mcts --simulations $EWN_SIMS" \
    --game einstein --games 60 --tc 100ms --out "$out/einstein-mcts" \
    | tee "$out/einstein-mcts.txt"
fi

# Dice chess: the start position, dice shared by each pair, 100 ms a move
if wanted dicechess; then
arena "net@descent:search=expectiminimax,model=$dc" \
    "heuristic@descent:search=expectiminimax,model=none" \
    --game dicechess --games 40 --tc 100ms --out "$out/dicechess-heuristic" \
    | tee "$out/dicechess-heuristic.txt"
"$PY" -m descent.research.dicechess_baselines --model "$dc" --tc 0.1 --games 40 \
    | tee "$out/dicechess-material.txt"
fi

"$PY" -m descent.research.move_times "$out"/*/games.jsonl | tee "$out/move-times.txt"
