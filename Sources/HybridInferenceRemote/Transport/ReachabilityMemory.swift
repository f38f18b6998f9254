import Foundation
import HybridInferenceCore
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Remembers, per origin, that a server could not be reached, and finds out
/// in the background when it can be again.
///
/// Why: on a dead link (SYNs dropped) every request waits the whole connect
/// timeout before it is known to be offline. Once one request has paid that,
/// a hybrid whose primary is this server asks `verdict(for:)` and goes
/// straight to its other model. A single prober per origin (a plain TCP
/// connect, `TCPProbe`) retries after 1 s, then 2, 4, ... up to 60 s
/// between tries, and clears the verdict when the port answers. A request
/// that reaches the server clears it too, and resets the backoff.
///
/// Why process-wide: reachability belongs to the server, not to a model
/// value. Every model (and every copy of one, every backend) with the same
/// origin shares what one of them learned, so `shared` is the one instance
/// the library uses; verdicts are keyed by `Origin`, not by the base URL's
/// path.
///
/// Why a lock: verdicts are read by hybrids and written by requests and the
/// prober, from any thread, and each read or write is a few field accesses.
/// A lock (`Locked`, which ThreadSanitizer can see) keeps them consistent without making every routing decision
/// `await` an actor.
package final class ReachabilityMemory: Sendable {
  /// The memory every model of the process shares.
  package static let shared = ReachabilityMemory()

  /// The wait before the first probe after a verdict.
  let initialBackoff: Duration
  /// The longest wait between two probes.
  let maximumBackoff: Duration
  private let probe: @Sendable (Origin, Duration) async -> Bool
  private let entries = Locked<[Origin: Entry]>([:])

  private struct Entry {
    /// Set while the origin is remembered as offline: the error that said so.
    var verdict: URLError?
    /// The wait before the next probe.
    var backoff: Duration
    /// Whether the origin's prober is running (at most one is).
    var probing = false
  }

  /// A memory; tests pass their own probe and backoff.
  init(
    initialBackoff: Duration = .seconds(1), maximumBackoff: Duration = .seconds(60),
    probe: @escaping @Sendable (Origin, Duration) async -> Bool = TCPProbe.canConnect
  ) {
    self.initialBackoff = initialBackoff
    self.maximumBackoff = maximumBackoff
    self.probe = probe
  }

  /// The error that made `origin` offline, while that verdict holds.
  package func verdict(for origin: Origin) -> URLError? {
    entries.withLock { $0[origin]?.verdict }
  }

  /// A request to `origin` failed as offline: remember it, and start the
  /// origin's prober unless it runs already.
  /// - Parameter probeTimeout: How long each probe may wait to connect.
  func recordOffline(_ origin: Origin, error: URLError, probeTimeout: Duration) {
    let startProber = entries.withLock { entries -> Bool in
      var entry = entries[origin] ?? Entry(backoff: initialBackoff)
      entry.verdict = error
      let start = !entry.probing
      entry.probing = true
      entries[origin] = entry
      return start
    }
    guard startProber else { return }
    Task.detached(priority: .utility) { [self] in
      await runProber(origin, timeout: probeTimeout)
    }
  }

  /// A request reached `origin`: forget any verdict and start the backoff
  /// afresh next time.
  func recordReachable(_ origin: Origin) {
    entries.withLock { entries in
      guard entries[origin] != nil else { return }
      entries[origin]?.verdict = nil
      entries[origin]?.backoff = initialBackoff
    }
  }

  /// Probes until the verdict is gone (cleared by a probe or by a request).
  /// The backoff is kept after a probe clears it: if requests fail again at
  /// once (the port answers but TLS does not, as behind a captive portal),
  /// the probes go on spacing out instead of restarting at 1 s.
  private func runProber(_ origin: Origin, timeout: Duration) async {
    while true {
      let wait = entries.withLock { entries -> Duration? in
        guard let entry = entries[origin], entry.verdict != nil else {
          entries[origin]?.probing = false
          return nil
        }
        return entry.backoff
      }
      guard let wait else { return }
      try? await Task.sleep(for: wait)
      let reachable = await probe(origin, timeout)
      entries.withLock { entries in
        guard var entry = entries[origin] else { return }
        if reachable { entry.verdict = nil }
        entry.backoff = min(entry.backoff * 2, maximumBackoff)
        entries[origin] = entry
      }
    }
  }
}

extension ReachabilityMemory {
  /// What one backend's requests report to the memory about one origin.
  package struct Reporter: Sendable {
    package let memory: ReachabilityMemory
    package let origin: Origin
    let probeTimeout: Duration

    package init(memory: ReachabilityMemory, origin: Origin, probeTimeout: Duration) {
      self.memory = memory
      self.origin = origin
      self.probeTimeout = probeTimeout
    }

    /// The request reached the server.
    func reachable() { memory.recordReachable(origin) }

    /// The request failed with `error`, a library error; only `.offline` counts.
    func failed(_ error: any Error) {
      guard case .offline(let urlError)? = error as? HybridInferenceError else { return }
      memory.recordOffline(origin, error: urlError, probeTimeout: probeTimeout)
    }
  }
}
