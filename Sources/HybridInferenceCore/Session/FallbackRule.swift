import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What never falls back, whatever the policy (the Architecture article, "Routing rules").
enum FallbackRule {
  /// Whether `error` is a cancellation (Swift's, URLSession's, or the task's
  /// own): never a reason to ask another model.
  static func isCancellation(_ error: any Error) -> Bool {
    if error is CancellationError { return true }
    if let urlError = error as? URLError, urlError.code == .cancelled { return true }
    return Task.isCancelled
  }
}
