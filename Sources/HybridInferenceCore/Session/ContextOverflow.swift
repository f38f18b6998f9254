/// What a session does when its transcript no longer fits the window of the
/// model that answers.
///
/// ```swift
/// let session = GenerativeModelSession(model: .hybridModel(primary: cloud, secondary: local),
///                                      contextOverflow: .dropOldestTurns)
/// ```
///
/// A struct with static members rather than an enum, so that it can grow (a
/// sliding window of a given size, a summary) without breaking a `switch`.
public struct ContextOverflow: Sendable, Hashable, CustomStringConvertible {
  enum Kind: Sendable, Hashable {
    case fail
    case dropOldestTurns
  }

  let kind: Kind

  /// Throw `HybridInferenceError.contextWindowExceeded` (the default): a
  /// hybrid falls back on it from an on-device primary, as ever.
  public static let fail = ContextOverflow(kind: .fail)

  /// Drop whole exchanges, oldest first, from what the answering model is
  /// sent, down to about half its window, keeping the instructions, the tool
  /// declarations and the newest prompt; a tool call never loses its output.
  ///
  /// - A hybrid whose primary cannot fit still falls back first; only the
  ///   model that answers last trims. A primary trims when its secondary is
  ///   unavailable or known to be offline, once a tool has pinned the
  ///   request to it, or when the secondary it fell back to failed too
  ///   before delivering anything (then it is asked again, allowed to trim,
  ///   and the retry is logged).
  /// - Half the window, not just enough: the next turns then fit without
  ///   trimming again, so the prompt's prefix (which the KV cache reuses)
  ///   changes once per half window, not on every turn. The session
  ///   remembers how many exchanges it dropped for a model and drops as many
  ///   on the next turns before it measures again.
  /// - Each trim is logged (`.warning`, category `.routing`) with the
  ///   number of exchanges dropped. The session's `transcript` keeps every
  ///   turn; only the request is trimmed.
  /// - A model takes part by throwing `contextWindowExceeded` before doing
  ///   work and by counting (`LanguageModel.promptTokenCount(for:)`); for
  ///   one that never throws it (the cloud) this is a no-op.
  public static let dropOldestTurns = ContextOverflow(kind: .dropOldestTurns)

  /// `fail` or `dropOldestTurns`.
  public var description: String {
    switch kind {
    case .fail: "fail"
    case .dropOldestTurns: "dropOldestTurns"
    }
  }
}
