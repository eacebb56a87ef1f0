"""The searcher's tree between moves: the root moved down to the game's position (tree reuse), and the
full boards of the tree's nodes (a bounded LRU cache; boards are rebuilt from the nearest cached ancestor)."""

from __future__ import annotations

from .board import Board
from .memory import release_memory, rss_mb
from .mcts import Node
from . import planes as P


class TreeMixin:
    """Tree reuse and the board cache of a `azgo.engine.search.Searcher`."""

    def set_game(self, game, reuse: bool = True) -> int:
        """Make the game's current position the root, keeping the explored subtree if there is one.

        Returns the visits kept (0 for a fresh tree). Under ``config.max_memory_mb`` the memory the
        discarded part of the tree held is given back to the system first; if the process is still
        over the cap, the tree starts afresh.
        """
        start = game.boards[0].hash
        moves = tuple(game.moves)
        board = game.board
        self.komi = game.komi
        self.history = game.boards[-2::-1][: P.HISTORY - 1]
        node = None
        if reuse and self.root is not None and self.root_key is not None and game.komi == self._root_komi:
            r_start, r_moves = self.root_key
            if r_start == start and moves[: len(r_moves)] == r_moves:
                node = self.root
                to_move = self._root_to_move
                for colour, move in moves[len(r_moves):]:
                    if move is None or colour != to_move or not node.expanded or move not in node.children:
                        node = None
                        break
                    node = node.children[move]
                    to_move = 3 - to_move
                if node is not None and node is not self.root and not (
                        node.expanded and to_move == board.to_move and node.cells is not None and node.hash == board.hash
                        and node.passes == board.passes):
                    node = None
                if node is self.root and self._root_to_move != board.to_move:
                    node = None
        self._drop_boards()
        if node is not self.root:
            self.root = None  # let the rest of the old tree go
            self.root_policy = None  # float32 [N*N+1]: the network's policy at the root, once evaluated here
        if node is not None and self.config.max_memory_mb is not None:
            release_memory()
            rss = rss_mb()
            if rss is not None and rss >= self.config.max_memory_mb:
                node = None  # what is kept is already too much: start afresh
                release_memory()
        if node is None:
            node = Node(passes=board.passes)
        node.board = board.copy()
        node.cells = bytes(board.cells)
        node.hash = board.hash
        node.passes = board.passes
        node.terminal = None  # a game after two passes can go on (GTP play, kgs-genmove_cleanup)
        if not node.to_dense() or (node.expanded and node.ownership is None and self.has_ownership):
            node.expanded = False  # the root needs every legal move and its ownership: ask the network again
        self.root = node
        self.root_key = (start, moves)
        self._root_komi = game.komi
        self._root_to_move = board.to_move
        self._board_cap = max(16, int(self.config.board_cache_mb * 2 ** 20 / _board_bytes(board)))
        return node.visits

    def _drop_boards(self) -> None:
        for n in self._boards:
            n.board = None
        self._boards.clear()
        self._in_flight.clear()

    def _build_board(self, path: list[tuple[Node, int]], node: Node) -> Board:
        """The full board of ``node`` (the end of ``path``, the (node, edge) pairs from the root): a copy
        of the deepest cached board on the path with the moves from there replayed. Every node of the
        path (they all have children now) gets its ``cells`` and ``hash`` on the way."""
        j = len(path) - 1
        while path[j][0].board is None:
            j -= 1
        start = path[j][0]
        if start in self._boards:
            self._boards.move_to_end(start)
        b = start.board.copy()
        if start.cells is None:
            start.cells = bytes(b.cells)
            start.hash = b.hash
        for k in range(j, len(path)):
            n, i = path[k]
            b.play_unchecked(int(n.moves[i]))
            if k + 1 < len(path):
                nxt = path[k + 1][0]
                if nxt.cells is None:
                    nxt.cells = bytes(b.cells)
                    nxt.hash = b.hash
        return b

    def _cache_board(self, node: Node) -> None:
        boards = self._boards
        boards[node] = None
        if len(boards) > self._board_cap:
            old, _ = boards.popitem(last=False)
            if old is not self.root:
                old.board = None

    def tree_nodes(self) -> int:
        """Nodes in the tree under the root (a walk of the whole tree: for tests and benchmarks)."""
        if self.root is None:
            return 0
        count = 0
        stack = [self.root]
        while stack:
            n = stack.pop()
            count += 1
            stack.extend(n.children.values())
        return count


def _board_bytes(board: Board) -> int:
    """About what one copy of ``board`` holds in memory (five lists of its cells, the cells, the
    superko history set)."""
    return 45 * board.g.ncells + 48 * len(board.history) + 1000
