import HybridInferenceCore

/// Remembers, per (origin, model, credential), that a server said "429, try
/// again in N seconds" (`RetryInfo.retryDelay`, or `Retry-After` from an
/// OpenAI-compatible server), until those seconds have passed.
///
/// Why: a hybrid whose policy falls back on rate limits
/// (`FallbackPolicy.default.adding(.rateLimited)`) reads it through the cloud
/// model's `rememberedFailure`, as it reads the offline verdict
/// (`ReachabilityMemory`), and goes straight to its other model: the server
/// is not asked again, and the request does not wait a round trip for the
/// same 429, until the delay is over. A 429 without a delay is not
/// remembered (the next request may well pass), a model used on its own is
/// asked every time (only hybrids read the memory), and a 2xx from the same
/// key clears it early.
///
/// Why that key: quotas are per project (the key) and model, on a server;
/// another key or another model on the same server is not limited by this
/// one's 429. The credential is kept as a hash, never as the key itself.
///
/// Why process-wide and a lock: as `ReachabilityMemory`, what one model
/// value learned holds for every copy, and the entries are read on every
/// routing decision and written by requests on any thread, each a few field
/// accesses (`Locked`).
package final class RateLimitMemory: Sendable {
  /// The memory every model of the process shares.
  package static let shared = RateLimitMemory()

  /// Who is rate limited.
  package struct Key: Hashable, Sendable {
    let origin: Origin
    let model: String
    /// A hash of the credential (0 without one), so the key is not kept.
    let credential: Int

    package init(origin: Origin, model: String, credential: RemoteAuthorizer?) {
      self.origin = origin
      self.model = model
      self.credential = credential?.identity ?? 0
    }
  }

  /// The longest delay remembered: a server asking for more is remembered for this long.
  static let maximumDelay = Duration.seconds(3600)

  private struct Entry {
    let error: CloudAPIError
    let until: ContinuousClock.Instant
  }

  private let entries = Locked<[Key: Entry]>([:])

  /// The 429 that limited `key`, while its delay lasts.
  package func verdict(for key: Key) -> CloudAPIError? {
    entries.withLock { entries in
      guard let entry = entries[key] else { return nil }
      if ContinuousClock.now >= entry.until {
        entries[key] = nil
        return nil
      }
      return entry.error
    }
  }

  /// A request for `key` failed with `error`: a 429 (or `RESOURCE_EXHAUSTED`)
  /// with a positive retry delay is remembered for that delay.
  package func record(_ error: CloudAPIError, for key: Key) {
    guard error.httpStatus == 429 || error.status == "RESOURCE_EXHAUSTED",
      let delay = error.retryDelay, delay > .zero
    else { return }
    let now = ContinuousClock.now
    let until = now.advanced(byWait: min(delay, Self.maximumDelay))
    entries.withLock { entries in
      entries[key] = Entry(error: error, until: until)
      // An entry is otherwise dropped only when its key is asked again, and
      // the key of a model value that is gone never is.
      if entries.count > Self.sweepThreshold { entries = entries.filter { now < $0.value.until } }
    }
  }

  /// Beyond this many entries, a new one sweeps out the expired ones.
  static let sweepThreshold = 64

  /// How many limits are remembered, expired ones not yet swept included.
  var count: Int { entries.withLock { $0.count } }

  /// Forgets `key`'s rate limit (a request for it succeeded, or the app asked).
  package func forget(_ key: Key) {
    entries.withLock { entries in
      if entries[key] != nil { entries[key] = nil }
    }
  }
}

extension RateLimitMemory {
  /// What one backend's requests report to the memory about their key.
  package struct Reporter: Sendable {
    let memory: RateLimitMemory
    let key: Key

    package init(memory: RateLimitMemory, key: Key) {
      self.memory = memory
      self.key = key
    }

    /// The server answered 2xx: any limit is over.
    package func answered() { memory.forget(key) }

    /// The server answered with an error status.
    package func failed(_ error: HybridInferenceError) {
      guard case .cloudAPI(let apiError) = error else { return }
      memory.record(apiError, for: key)
    }

    /// The remembered 429 as the error a request would throw, while it lasts.
    package var verdict: HybridInferenceError? { memory.verdict(for: key).map { .cloudAPI($0) } }
  }
}
