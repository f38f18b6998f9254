import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Turns what went wrong on the wire into the library's typed errors.
enum CloudErrorMapping {
  /// The URLError codes that mean the cloud cannot be reached from here.
  ///
  /// Besides the obvious ones (no route, DNS, refused, lost), TLS failures
  /// count: behind a captive portal or a broken middlebox the handshake is
  /// what fails, and the cloud is just as unreachable. Not included:
  /// `resourceUnavailable` and the other codes that describe a reply rather
  /// than the path to the server.
  static let offlineCodes: Set<URLError.Code> = [
    .notConnectedToInternet, .cannotFindHost, .cannotConnectToHost, .networkConnectionLost,
    .dnsLookupFailed, .timedOut, .internationalRoamingOff, .callIsActive, .dataNotAllowed,
    .cannotLoadFromNetwork, .secureConnectionFailed, .serverCertificateUntrusted,
    .serverCertificateHasBadDate, .serverCertificateNotYetValid,
    .serverCertificateHasUnknownRoot,
  ]

  /// The typed error of a non-2xx response.
  ///
  /// Google's JSON body gives status, message, retry delay, reason and quota
  /// ids; any other body (an HTML page from a proxy) still gives a typed
  /// error with the HTTP status and a short message, never the page itself.
  static func apiError(
    status: Int, contentType: String?, body: Data, apiKey: APIKey?
  ) -> HybridInferenceError {
    if let envelope = envelope(in: body) {
      var error = envelope.cloudAPIError(httpStatus: status)
      if let apiKey { error.message = apiKey.redact(error.message) }
      return .cloudAPI(error)
    }
    let kind = contentType.map { $0.split(separator: ";").first.map(String.init) ?? $0 } ?? "no content type"
    let message =
      "HTTP \(status) (\(HTTPURLResponse.localizedString(forStatusCode: status))) with a "
      + "non-JSON body of \(body.count) bytes (\(kind))"
    return .cloudAPI(CloudAPIError(httpStatus: status, message: message))
  }

  /// The error of a mid-stream `{"error": ...}` object, or nil when `json`
  /// is not one. The HTTP status of such an error is the one in the body.
  static func streamError(_ json: Data, apiKey: APIKey?) -> HybridInferenceError? {
    guard let envelope = envelope(in: json) else { return nil }
    var error = envelope.cloudAPIError(httpStatus: envelope.error.code ?? 500)
    if let apiKey { error.message = apiKey.redact(error.message) }
    return .cloudAPI(error)
  }

  /// Google's error object in `body`: bare (`{"error": ...}`), in the JSON
  /// array that non-SSE streams use (`[{"error": ...}]`), or framed as the
  /// first event of an SSE body (`data: {"error": ...}`).
  static func envelope(in body: Data) -> ErrorEnvelope? {
    let decoder = JSONDecoder()
    if let envelope = try? decoder.decode(ErrorEnvelope.self, from: body) { return envelope }
    if let first = try? decoder.decode([ErrorEnvelope].self, from: body).first { return first }
    // The body is already bounded by `RequestOptions.maximumResponseBytes`.
    var parser = SSEParser()
    guard let events = try? parser.feed(body) + parser.finish(),
      let data = events.first(where: \.hasData)?.data
    else { return nil }
    return try? decoder.decode(ErrorEnvelope.self, from: Data(data.utf8))
  }

  /// The typed error of a transport failure.
  /// - Parameters:
  ///   - receivedResponse: Whether any byte of the response had arrived; a
  ///     timeout after that is the server's slowness, not being offline.
  ///   - timeout: The call's overall limit, reported by `.timedOut`.
  static func transportError(
    _ error: any Error, receivedResponse: Bool, timeout: Duration
  ) -> any Error {
    if error is CancellationError { return error }
    guard let urlError = error as? URLError else {
      return HybridInferenceError.malformedResponse(
        "transport failure: \(HybridInferenceError.describe(error))")
    }
    switch urlError.code {
    case .cancelled:
      return CancellationError()
    case .timedOut where receivedResponse:
      return HybridInferenceError.timedOut(timeout)
    case .badServerResponse where !receivedResponse:
      // The server closed the connection without answering: a lost connection.
      return HybridInferenceError.offline(urlError)
    case let code where offlineCodes.contains(code):
      return HybridInferenceError.offline(urlError)
    case .badURL, .unsupportedURL:
      return HybridInferenceError.invalidOptions(
        "the base URL is not usable: \(HybridInferenceError.describe(urlError))")
    default:
      return HybridInferenceError.malformedResponse(
        "transport failure: \(HybridInferenceError.describe(urlError))")
    }
  }
}
