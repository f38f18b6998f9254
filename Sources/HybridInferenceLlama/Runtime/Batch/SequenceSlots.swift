import HybridInferenceCore
import HybridInferenceJinja

/// Who holds which sequence of a batched context: the leasing rules, as a
/// value kept under the context's lock.
///
/// A sequence stays with its session's cache after a request, so the
/// session's next turn decodes only its new tokens; idle sessions hold no
/// compute, and two hundred of them cost nothing but their transcripts.
/// Sessions do not see each other: a sequence that changes hands keeps only
/// its instruction prefix (`SequenceCache.keepInstructions`).
struct SequenceSlots {
  /// A request's hold on a sequence.
  struct Lease {
    let sequence: Int
    /// True when the sequence last served another session: only its
    /// shareable prefix may be reused.
    let changedHands: Bool
  }

  private struct Slot {
    var owner: ObjectIdentifier?
    var busy = false
    var lastUsed: UInt64 = 0
  }

  private var slots: [Slot]
  private var clock: UInt64 = 0

  init(count: Int) {
    slots = Array(repeating: Slot(), count: max(1, count))
  }

  var count: Int { slots.count }

  /// Adds idle, unowned slots up to `count` (the context grew).
  mutating func grow(to count: Int) {
    if count > slots.count { slots += Array(repeating: Slot(), count: count - slots.count) }
  }

  /// A sequence for `owner`: its own if idle, else one no session owns,
  /// else the least recently used idle one; nil while every one is busy.
  mutating func lease(for owner: ObjectIdentifier) -> Lease? {
    clock += 1
    if let index = slots.indices.first(where: { slots[$0].owner == owner && !slots[$0].busy }) {
      return take(index, for: owner, changedHands: false)
    }
    let idle = slots.indices.filter { !slots[$0].busy }
    let unowned = idle.first { slots[$0].owner == nil }
    guard let index = unowned ?? idle.min(by: { slots[$0].lastUsed < slots[$1].lastUsed }) else { return nil }
    return take(index, for: owner, changedHands: true)
  }

  private mutating func take(_ index: Int, for owner: ObjectIdentifier, changedHands: Bool) -> Lease {
    slots[index].owner = owner
    slots[index].busy = true
    slots[index].lastUsed = clock
    return Lease(sequence: index, changedHands: changedHands)
  }

  /// Ends a request's hold; the sequence keeps its cache for its session.
  mutating func giveBack(_ sequence: Int) {
    slots[sequence].busy = false
  }

  /// A session has ended: its sequences belong to nobody, so the next
  /// session to take one keeps at most its instructions.
  mutating func ownerEnded(_ owner: ObjectIdentifier) {
    for index in slots.indices where slots[index].owner == owner { slots[index].owner = nil }
  }

  /// How many sequences no request holds now.
  var idleCount: Int { slots.count { !$0.busy } }

  /// How many sequences no live session owns.
  var unownedCount: Int { slots.count { $0.owner == nil } }
}

/// A session's claim on the on-device model's sequences, kept in its
/// `SessionStorage`: an identity and nothing heavier. When the session goes
/// away, the contexts it used forget that it owned anything.
final class LocalSessionClaim: Sendable {
  private let contexts = Locked<[ObjectIdentifier: BatchedContext]>([:])

  var owner: ObjectIdentifier { ObjectIdentifier(self) }

  /// Records that this session used `context`.
  func uses(_ context: BatchedContext) {
    contexts.withLock { $0[ObjectIdentifier(context)] = context }
  }

  deinit {
    let owner = owner
    contexts.withLock { $0.values.forEach { $0.ownerEnded(owner) } }
  }
}
