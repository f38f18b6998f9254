import Synchronization

/// The llama contexts of one model, leased to requests, never held by idle sessions.
///
/// A context costs a KV cache, a thread and an OpenMP team, so a model has at
/// most `capacity` of them however many sessions exist: two hundred idle
/// sessions cost nothing but their transcripts. After a request the context
/// stays with its session's cache until someone else needs it, so the
/// session's next turn decodes only its new tokens.
///
/// Sessions do not see each other: a context that changes hands keeps only
/// its instruction prefix (`LlamaContext.shareablePrefix`), and when a session
/// ends its contexts forget everything after that prefix.
///
/// The slots live behind a `Mutex`: requests lease and return contexts from
/// any task, and a session's end arrives from whichever thread releases it.
final class ContextPool: Sendable {
  /// A request's hold on a context.
  struct Lease: Sendable {
    let context: LlamaContext
    /// True when the context last served another session: only its
    /// shareable prefix may be reused.
    let changedHands: Bool
  }

  private struct Slot {
    let context: LlamaContext
    var owner: ObjectIdentifier?
    var busy: Bool
    var lastUsed: UInt64
  }

  private struct State {
    var slots: [Slot] = []
    var clock: UInt64 = 0
  }

  /// Contexts kept per model. Requests take the compute budget before a
  /// context, so at most `ComputeBudget.cores / threads` of them run at once;
  /// the capacity covers that and keeps the caches of the last sessions.
  let capacity: Int
  private let state = Mutex(State())

  init(capacity: Int) {
    self.capacity = max(1, capacity)
  }

  /// A context for `owner`: its own if it is idle, else one no session owns
  /// (warm, and its instructions may match), else a new one while under
  /// capacity, else the least recently used idle one. Only when every
  /// context is busy (a budget wider than the capacity) is one made beyond
  /// it, freed when returned.
  func lease(owner: ObjectIdentifier, model: LlamaModel, settings: LlamaContext.Settings) -> Lease {
    state.withLock { state in
      state.clock += 1
      state.slots.removeAll { $0.context.model !== model || $0.context.settings != settings }
      if let index = state.slots.firstIndex(where: { $0.owner == owner && !$0.busy }) {
        state.slots[index].busy = true
        state.slots[index].lastUsed = state.clock
        return Lease(context: state.slots[index].context, changedHands: false)
      }
      let idle = state.slots.indices.filter { !state.slots[$0].busy }
      let unowned = idle.first { state.slots[$0].owner == nil }
      let leastRecent = idle.min { state.slots[$0].lastUsed < state.slots[$1].lastUsed }
      if let index = unowned ?? (state.slots.count >= capacity ? leastRecent : nil) {
        state.slots[index].owner = owner
        state.slots[index].busy = true
        state.slots[index].lastUsed = state.clock
        return Lease(context: state.slots[index].context, changedHands: true)
      }
      let context = LlamaContext(model: model, settings: settings)
      state.slots.append(Slot(context: context, owner: owner, busy: true, lastUsed: state.clock))
      return Lease(context: context, changedHands: false)
    }
  }

  /// Ends a request's hold; the context keeps its cache for its session.
  func giveBack(_ lease: Lease) {
    state.withLock { state in
      guard let index = state.slots.firstIndex(where: { $0.context === lease.context }) else { return }
      state.slots[index].busy = false
      if state.slots.count > capacity { state.slots.remove(at: index) }
    }
  }

  /// A session has ended: its contexts keep only their shareable prefix.
  func ownerEnded(_ owner: ObjectIdentifier) {
    let released = state.withLock { state -> [LlamaContext] in
      var released: [LlamaContext] = []
      for index in state.slots.indices where state.slots[index].owner == owner {
        state.slots[index].owner = nil
        released.append(state.slots[index].context)
      }
      return released
    }
    released.forEach { $0.forgetPrivateTokens() }
  }

  /// How many contexts exist now (for tests).
  var count: Int { state.withLock { $0.slots.count } }

  /// Whether no context has work queued or running (for tests: a cancelled
  /// request must leave its context's thread idle, not just return).
  var isIdle: Bool { state.withLock { $0.slots.allSatisfy { $0.context.isIdle } } }
}

/// A session's claim on the on-device model's contexts, kept in its
/// `ConversationState`: an identity and nothing heavier. When the session goes
/// away, the pools it used forget what it said.
final class LocalSessionClaim: Sendable {
  private let pools = Mutex<[ObjectIdentifier: ContextPool]>([:])

  var owner: ObjectIdentifier { ObjectIdentifier(self) }

  /// Records that this session leased from `pool`.
  func uses(_ pool: ContextPool) {
    pools.withLock { $0[ObjectIdentifier(pool)] = pool }
  }

  deinit {
    let owner = owner
    pools.withLock { $0.values.forEach { $0.ownerEnded(owner) } }
  }
}
