import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The request every remote backend sends: a POST of a JSON body (or a GET
/// without one), the `Accept` its answer needs, and URLSession's own timer
/// set as a backstop behind the transport's. Each backend adds its headers;
/// the credential is added per attempt by the model's `RemoteAuthorizer`.
package enum RemoteRequest {
  /// A request to `url`: POST with `body` as JSON, or GET when it is nil.
  /// - Parameters:
  ///   - streaming: Whether the answer is a server-sent event stream.
  ///   - timeout: The call's limit (`RequestOptions.timeout`).
  package static func make(
    _ url: URL, body: (some Encodable)?, streaming: Bool, timeout: Duration
  ) throws(HybridInferenceError) -> URLRequest {
    var request = URLRequest(url: url)
    if let body {
      request.httpMethod = "POST"
      request.httpBody = try RequestBodyEncoder.encode(body)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    } else {
      request.httpMethod = "GET"
    }
    request.setValue(streaming ? "text/event-stream" : "application/json", forHTTPHeaderField: "Accept")
    // URLSession's own (idle) timer is a backstop behind the transport's;
    // clamped as every duration is before arithmetic (`WaitLimits`).
    request.timeoutInterval = max(1, WaitLimits.clamped(timeout) / .seconds(1)) + 60
    return request
  }
}
