"""Walking the graph plane: from memories along their edges to related memories.

Memories point at other memories (``next``: the following chunk of a file) and at hub nodes: the
entities they mention (``e:<name>``) and the source they belong to (``s:<path>``). One hop goes
from a memory along its outgoing edges; reaching a hub continues to the other memories that point
at it, weighted down by how many do (a name mentioned everywhere connects nothing in particular).
Hubs pointed at by more than ``max_hub_degree`` memories are not crossed. With ``reverse``, edges
between memories are also walked backwards (to the previous chunk).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from ..store import WorkspaceStore
from ..store.rows import Edge
from ..store.schema import ENTITY_PREFIX, SOURCE_PREFIX

MAX_HUB_DEGREE = 64


@dataclass(frozen=True)
class Link:
    """How a memory was reached: over ``relation``, through ``via`` (a hub node, or '' when direct)."""

    id: str
    score: float
    hop: int
    relation: str
    via: str
    origin: str  # the memory the walk came from


def _is_hub(node: str) -> bool:
    return node.startswith((ENTITY_PREFIX, SOURCE_PREFIX))


def walk(store: WorkspaceStore, seeds: list[str], *, hops: int, reverse: bool,
         max_hub_degree: int = MAX_HUB_DEGREE) -> list[Link]:
    """Memories reachable from ``seeds`` within ``hops``, best first; seeds themselves excluded.

    Each seed contributes ``1 / (1 + position)`` of weight, so the walk favours the best seeds; a
    memory reached several ways adds its scores up.

    Raises:
        StoreError: the edges table cannot be read.
    """
    if not seeds:
        return []
    weight = {s: 1.0 / (1 + i) for i, s in enumerate(seeds)}
    best: dict[str, Link] = {}
    scores: dict[str, float] = defaultdict(float)
    visited = set(seeds)
    frontier = dict(weight)
    degrees = None
    for hop in range(1, hops + 1):
        out = store.edges_from(list(frontier))
        if reverse:
            out += [Edge(e.dst, e.src, e.relation + "^-1", e.weight) for e in store.edges_to(list(frontier), ["next"])]
        reached: list[tuple[str, float, str, str, str]] = []
        hubs: dict[str, list[tuple[str, float, str]]] = defaultdict(list)
        for e in out:
            if e.weight <= 0.0:  # a link that carries no relevance (``supersedes``)
                continue
            w = frontier[e.src] * e.weight
            if _is_hub(e.dst):
                hubs[e.dst].append((e.src, w, e.relation))
            else:
                reached.append((e.dst, w, e.relation, "", e.src))
        if hubs:
            degrees = degrees if degrees is not None else store.hub_degrees()
            crossable = [h for h in hubs if 1 < degrees.get(h, 0) <= max_hub_degree]
            if crossable:
                fan = store.edges_to(crossable, ["mentions", "part_of"])
                for e in fan:
                    damp = 1.0 / math.log2(1 + degrees[e.dst])
                    for origin, w, relation in hubs[e.dst]:
                        if e.src != origin:
                            reached.append((e.src, w * damp, relation, e.dst, origin))
        frontier = {}
        for node, w, relation, via, origin in reached:
            if node in visited:
                continue
            scores[node] += w
            link = best.get(node)
            if link is None or w > link.score:
                best[node] = Link(node, w, hop, relation, via, origin)
            frontier[node] = max(frontier.get(node, 0.0), w)
        visited.update(frontier)
        if not frontier:
            break
    ranked = sorted(best.values(), key=lambda link: (-scores[link.id], link.hop, link.id))
    return [Link(link.id, scores[link.id], link.hop, link.relation, link.via, link.origin) for link in ranked]
