import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import Synchronization

/// Collects the fallbacks the library reports during one answer, so the
/// command can say which fallback happened (in `--json`, per response).
public final class FallbackRecorder: Sendable {
  private let events = Mutex<[FallbackEvent]>([])

  /// An empty recorder.
  public init() {}

  /// Remembers `event`.
  public func record(_ event: FallbackEvent) {
    events.withLock { $0.append(event) }
  }

  /// The first fallback since the last call (the one that decided which model
  /// answered), forgetting all of them for the next answer.
  public func takeFirst() -> FallbackEvent? {
    events.withLock { events in
      defer { events.removeAll() }
      return events.first
    }
  }
}
