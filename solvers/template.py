"""Source text of the compiled search, instantiated per game by longpuzzle.solvers.core.

The generated module gets (from engine.specialize's header) the game's ``step_into``,
``legal_into``, ``is_solved``, ``progress``; then the four solver hooks, either imported from
the game's knowledge kernels (solvers/knowledge/<game>_kernels.py) or the generic ones
below; then the search itself.

Hooks (``aux`` is an int64 array of per-level solver data made in Python by the knowledge):

    pack(lv, aux, s, key, off)       state -> W uint64 words key[off:off+W] (canonical form if the game has
                                     symmetries: two states with equal keys are equivalent)
    unpack(lv, aux, key, off, s)     words key[off:off+W] -> a state (the canonical representative)
    expand(lv, aux, s, succ, acts)   successors of s into succ[i, :], their actions into
                                     acts[i]; returns how many
    heuristic(lv, aux, s)            admissible and consistent lower bound on moves left
    successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h)
                                     successors of s (key keys[off:off+W]) as keys
                                     skeys[i, :] with actions, solved flags and (if want_h)
                                     heuristic values; default: expand + pack + is_solved
"""

# generic hooks: pack by a field spec in aux, expand by legal_into + step_into, h = 0
DEFAULT_HOOKS = {
    "pack": '''
@njit(cache=True)
def pack(lv, aux, s, key, off):
    """aux = [W, L, lo_0, bits_0, lo_1, bits_1, ...]: field i holds s[i] - lo_i in bits_i
    bits (0 bits: the field is the constant lo_i). Fields never straddle a word."""
    w = int(aux[0])
    n = int(aux[1])
    for j in range(w):
        key[off + j] = 0
    word = off
    shift = 0
    for i in range(n):
        b = int(aux[3 + 2 * i])
        if b == 0:
            continue
        if shift + b > 64:
            word += 1
            shift = 0
        key[word] |= np.uint64(int(s[i]) - int(aux[2 + 2 * i])) << np.uint64(shift)
        shift += b
''',
    "unpack": '''
@njit(cache=True)
def unpack(lv, aux, key, off, s):
    n = int(aux[1])
    word = off
    shift = 0
    for i in range(n):
        b = int(aux[3 + 2 * i])
        lo = int(aux[2 + 2 * i])
        if b == 0:
            s[i] = lo
            continue
        if shift + b > 64:
            word += 1
            shift = 0
        mask = (np.uint64(1) << np.uint64(b)) - np.uint64(1)
        s[i] = int((key[word] >> np.uint64(shift)) & mask) + lo
        shift += b
''',
    "expand": '''
@njit(cache=True)
def expand(lv, aux, s, succ, acts):
    mask = np.zeros(succ.shape[0], np.uint8)
    legal_into(lv, s, mask)
    k = 0
    for a in range(succ.shape[0]):
        if mask[a]:
            if step_into(lv, s, succ[k], a) == 0:
                acts[k] = a
                k += 1
    return k
''',
    "heuristic": '''
@njit(cache=True)
def heuristic(lv, aux, s):
    return 0
''',
    "successors": '''
@njit(cache=True)
def successors(lv, aux, s, keys, off, succ, skeys, acts, solved, hv, want_h):
    """Successors of s (whose key is keys[off:off+W]) as keys skeys[i, :], with their actions,
    whether each is solved and (if want_h) its heuristic value."""
    k = expand(lv, aux, s, succ, acts)
    for i in range(k):
        st = succ[i]
        pack(lv, aux, st, skeys[i], 0)
        solved[i] = is_solved(lv, st)
        if want_h:
            hv[i] = heuristic(lv, aux, st)
    return k
''',
}

CORE = '''

@njit(cache=True, inline="always")
def _hash(keys, base, w):
    h = np.uint64(0x9E3779B97F4A7C15)
    for j in range(w):
        x = keys[base + j] ^ h
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h = x ^ (x >> np.uint64(31))
    return h


@njit(cache=True)
def _rehash(keys, n, w, size):
    """Open-addressing table of ``size`` slots, two int64 each: the key's 64-bit hash and
    id + 1 (0 = empty), side by side so a probe touches one cache line. For one-word keys
    the hash is a bijection of the key, so equal hashes mean equal keys."""
    table = np.zeros(2 * size, np.int64)
    m = np.uint64(size - 1)
    for i in range(n):
        h = _hash(keys, i * w, w)
        p = np.int64(h & m)
        while table[2 * p + 1] != 0:
            p = (p + 1) & (size - 1)
        table[2 * p] = np.int64(h)
        table[2 * p + 1] = i + 1
    return table


@njit(cache=True)
def _grow1(a, n):
    b = np.empty(n, a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def search(lv, aux, init, w, mode, weight, max_states, n_actions, stop_at_goal, upper):
    """Exhaustive search from ``init``.

    mode 0: breadth-first (goal tested on generation: optimal in moves)
    mode 1: best-first on f = g + weight*h with a bucket queue (weight 1: A*, goal tested on
            removal, so the answer is optimal when h is admissible and consistent)
    mode 2: depth-first reachability (goal tested on generation; any solution)
    Stops at a goal (if stop_at_goal), when the space is exhausted, or when ``max_states``
    states are stored. In mode 1 with weight 1, states with g + h >= ``upper`` are not
    stored: exhausting the space then proves that no solution is shorter than ``upper``.

    Returns (status, goal, n, keys, parent, action, g, lower):
    status 1 solved (goal = id), 0 exhausted (no goal reachable), -1 budget reached;
    lower = for mode 1 with weight 1, a proven lower bound on the solution length
    (the smallest f still open), else -1.
    """
    L = init.shape[0]
    cap = 4096
    keys = np.zeros(cap * w, np.uint64)
    parent = np.empty(cap, np.int32)
    action = np.empty(cap, np.int16)
    g = np.zeros(cap, np.int16)
    tsize = 8192
    table = np.zeros(2 * tsize, np.int64)
    tmask = tsize - 1
    succ = np.empty((n_actions, L), init.dtype)
    acts = np.empty(n_actions, np.int64)
    skeys = np.zeros((n_actions, w), np.uint64)
    solvedv = np.zeros(n_actions, np.bool_)
    hv = np.zeros(n_actions, np.int64)
    cur = init.copy()

    pack(lv, aux, init, keys, 0)
    parent[0] = -1
    action[0] = -1
    g[0] = 0
    n = 1
    h0 = _hash(keys, 0, w)
    p0 = np.int64(h0 & np.uint64(tmask))
    table[2 * p0] = np.int64(h0)
    table[2 * p0 + 1] = 1
    if is_solved(lv, init):
        return 1, 0, n, keys, parent, action, g, 0

    # queues: BFS uses ids in order; DFS a stack; best-first buckets of (id, g) entries
    stack = np.empty(1024, np.int32)
    sp = 0
    nb = 256
    bhead = np.full(nb, -1, np.int64)
    qid = np.empty(1024, np.int32)
    qg = np.empty(1024, np.int32)
    qnext = np.empty(1024, np.int64)
    nq = 0
    fmin = 0
    if mode == 1:
        f0 = weight * heuristic(lv, aux, init)
        if f0 >= nb:
            nb2 = f0 * 2 + 16
            bh = np.full(nb2, -1, np.int64)
            bh[:nb] = bhead
            bhead = bh
            nb = nb2
        qid[0] = 0
        qg[0] = 0
        qnext[0] = -1
        bhead[f0] = 0
        nq = 1
        fmin = f0
    elif mode == 2:
        stack[0] = 0
        sp = 1
    head = 0
    status = 0
    goal = -1
    lower = -1
    while True:
        # ---- pick the next state to expand
        if mode == 0:
            if head >= n:
                break
            u = head
            head += 1
        elif mode == 2:
            if sp == 0:
                break
            sp -= 1
            u = int(stack[sp])
        else:
            while fmin < nb and bhead[fmin] < 0:
                fmin += 1
            if fmin >= nb:
                break
            e = bhead[fmin]
            bhead[fmin] = qnext[e]
            u = int(qid[e])
            if int(qg[e]) != int(g[u]):
                continue          # stale entry: u was reached more cheaply later
            unpack(lv, aux, keys, u * w, cur)
            if weight == 1 and is_solved(lv, cur):
                return 1, u, n, keys, parent, action, g, fmin
        if mode != 1:
            unpack(lv, aux, keys, u * w, cur)
        gu = int(g[u])
        k = successors(lv, aux, cur, keys, u * w, succ, skeys, acts, solvedv, hv, mode == 1)
        for i in range(k):
            h = np.uint64(0x9E3779B97F4A7C15)
            for j in range(w):
                x = skeys[i, j] ^ h
                x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                h = x ^ (x >> np.uint64(31))
            p = np.int64(h & np.uint64(tmask))
            hs = np.int64(h)
            found = -1
            while True:
                t = table[2 * p + 1]
                if t == 0:
                    break
                if table[2 * p] == hs:
                    if w == 1:
                        found = t - 1
                        break
                    b = (t - 1) * w
                    same = True
                    for j in range(w):
                        if keys[b + j] != skeys[i, j]:
                            same = False
                            break
                    if same:
                        found = t - 1
                        break
                p = (p + 1) & tmask
            if mode == 1 and weight == 1 and gu + 1 + hv[i] >= upper:
                continue
            if found >= 0:
                if mode == 1 and gu + 1 < int(g[found]):
                    # reopen with the shorter path
                    g[found] = gu + 1
                    parent[found] = u
                    action[found] = acts[i]
                    f = gu + 1 + weight * hv[i]
                    if nq >= qid.shape[0]:
                        qid = _grow1(qid, nq * 2)
                        qg = _grow1(qg, nq * 2)
                        qnext = _grow1(qnext, nq * 2)
                    if f >= nb:
                        nb2 = f * 2 + 16
                        bh = np.full(nb2, -1, np.int64)
                        bh[:nb] = bhead
                        bhead = bh
                        nb = nb2
                    qid[nq] = found
                    qg[nq] = gu + 1
                    qnext[nq] = bhead[f]
                    bhead[f] = nq
                    nq += 1
                    if f < fmin:
                        fmin = f
                continue
            if n >= max_states:
                status = -1
                if mode == 1 and weight == 1:
                    lower = fmin
                return status, goal, n, keys, parent, action, g, lower
            # insert as a new state
            if n >= cap:
                cap2 = cap * 2
                k2 = np.zeros(cap2 * w, np.uint64)
                k2[:cap * w] = keys
                keys = k2
                parent = _grow1(parent, cap2)
                action = _grow1(action, cap2)
                g = _grow1(g, cap2)
                cap = cap2
            for j in range(w):
                keys[n * w + j] = skeys[i, j]
            parent[n] = u
            action[n] = acts[i]
            g[n] = gu + 1
            table[2 * p] = hs
            table[2 * p + 1] = n + 1
            v = n
            n += 1
            if 10 * n > 7 * tsize:
                tsize *= 2
                tmask = tsize - 1
                table = _rehash(keys, n, w, tsize)
            if mode != 1 or weight != 1:
                if stop_at_goal and solvedv[i]:
                    return 1, v, n, keys, parent, action, g, -1
            if mode == 2:
                if sp >= stack.shape[0]:
                    stack = _grow1(stack, sp * 2)
                stack[sp] = v
                sp += 1
            elif mode == 1:
                f = gu + 1 + weight * hv[i]
                if nq >= qid.shape[0]:
                    qid = _grow1(qid, nq * 2)
                    qg = _grow1(qg, nq * 2)
                    qnext = _grow1(qnext, nq * 2)
                if f >= nb:
                    nb2 = f * 2 + 16
                    bh = np.full(nb2, -1, np.int64)
                    bh[:nb] = bhead
                    bhead = bh
                    nb = nb2
                qid[nq] = v
                qg[nq] = gu + 1
                qnext[nq] = bhead[f]
                bhead[f] = nq
                nq += 1
                if f < fmin:
                    fmin = f
    return status, goal, n, keys, parent, action, g, lower


@njit(cache=True)
def pack_one(lv, aux, s, key):
    pack(lv, aux, s, key, 0)


@njit(cache=True)
def unpack_one(lv, aux, key, s):
    unpack(lv, aux, key, 0, s)
'''
