import Foundation

@testable import HybridInferenceRemote

extension TransportExchange {
  /// The response's body, read to the end of the exchange; throws what the
  /// exchange throws.
  func body() async throws -> Data {
    var body = Data()
    for try await event in events {
      if case .body(let data) = event { body += data }
    }
    return body
  }
}
