import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Turns what went wrong on the wire into the library's typed errors.
package enum RemoteErrorMapping {
  /// The URLError codes that mean the cloud cannot be reached from here,
  /// whenever they happen: each fails before anything reaches the server.
  ///
  /// Besides the obvious ones (no route, DNS, refused), TLS failures count:
  /// the handshake comes before the request, so nothing (no key, no prompt)
  /// was sent, and behind a captive portal or a broken middlebox the
  /// handshake is what fails while the cloud is just as unreachable. A
  /// server that completes the handshake and then stalls is past this point
  /// and is never offline (`timedOut`). Not included: `timedOut`,
  /// `networkConnectionLost` and `badServerResponse`, which are offline only
  /// before the request went out (see `transportError`), and the codes that
  /// describe a reply rather than the path to the server.
  static let offlineCodes: Set<URLError.Code> = [
    .notConnectedToInternet, .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed,
    .internationalRoamingOff, .callIsActive, .dataNotAllowed, .cannotLoadFromNetwork,
    .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
    .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot,
  ]

  /// The typed error of a non-2xx response.
  ///
  /// Google's JSON body gives status, message, retry delay, reason and quota
  /// ids; any other body (an HTML page from a proxy) still gives a typed
  /// error with the HTTP status and a short message, never the page itself.
  package static func apiError(
    status: Int, contentType: String?, body: Data, secrets: (any SecretRedacting)?
  ) -> HybridInferenceError {
    if let envelope = envelope(in: body) {
      return .cloudAPI(inert(envelope.cloudAPIError(httpStatus: status), redacting: secrets))
    }
    let message = nonJSONMessage(status: status, mediaType: mediaType(contentType), byteCount: body.count)
    return .cloudAPI(inert(CloudAPIError(httpStatus: status, message: message), redacting: secrets))
  }

  /// The media type of a `Content-Type` header, without its parameters;
  /// "no content type" when there is none.
  package static func mediaType(_ contentType: String?) -> String {
    contentType.map { $0.split(separator: ";").first.map(String.init) ?? $0 } ?? "no content type"
  }

  /// What every backend says of an error body that is not its JSON envelope
  /// (an HTML page from a proxy): the status and the body's size and type,
  /// never the body itself.
  package static func nonJSONMessage(status: Int, mediaType: String, byteCount: Int) -> String {
    "HTTP \(status) (\(HTTPURLResponse.localizedString(forStatusCode: status))) with a "
      + "non-JSON body of \(byteCount) bytes (\(mediaType))"
  }

  /// The error of a mid-stream `{"error": ...}` object, or nil when `json`
  /// is not one. The HTTP status of such an error is the one in the body.
  package static func streamError(_ json: Data, secrets: (any SecretRedacting)?) -> HybridInferenceError? {
    guard let envelope = envelope(in: json) else { return nil }
    return .cloudAPI(inert(envelope.cloudAPIError(httpStatus: envelope.error.code ?? 500), redacting: secrets))
  }

  /// `error` as it may travel, for every backend: the key redacted from each
  /// text the server wrote, then each text cut and its control characters
  /// escaped (`ServerText`): the message to 4 KiB, Google's status, the
  /// reason and each quota id to 256 bytes, at most 64 quota ids. Redacted
  /// first, so that a key the cut falls inside cannot leave part of itself.
  package static func inert(_ error: CloudAPIError, redacting secrets: (any SecretRedacting)?) -> CloudAPIError {
    func clean(_ text: String, limit: Int = 256) -> String {
      ServerText.inert(secrets.map { $0.redact(text) } ?? text, limit: limit)
    }
    var error = error
    error.message = clean(error.message, limit: ServerText.maximumBytes)
    error.status = error.status.map { clean($0) }
    error.reason = error.reason.map { clean($0) }
    error.quotaIds = error.quotaIds.prefix(64).map { clean($0) }
    return error
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
  ///
  /// Offline means the request never reached the server: no route, DNS,
  /// refused, TLS, the connect timeout, a reset before the request went
  /// out, or any other failure before that point. Once it went out (`connected`), a reset is `.connectionLost` and
  /// running out of time is `.timedOut`: slow is not offline.
  /// - Parameters:
  ///   - connected: Whether the connection was made and the request had
  ///     started to go out (the transport's `.connected` event).
  ///   - receivedResponse: Whether the response head had arrived.
  ///   - timeout: The call's overall limit, reported by `.timedOut`.
  static func transportError(
    _ error: any Error, connected: Bool, receivedResponse: Bool, timeout: Duration
  ) -> any Error {
    if error is CancellationError { return error }
    let reached = connected || receivedResponse
    switch error as? TransportFailure {
    case .deadlineExceeded?:
      return HybridInferenceError.timedOut(timeout)
    case .redirectRefused(let from, let to)?:
      return HybridInferenceError.redirectRefused(from: from.description, to: to.description)
    case .invalidRequestHeader(let name)?:
      return HybridInferenceError.invalidOptions(
        "the request header \(ServerText.inert(name, limit: 64)) has a line break, NUL or invalid name; nothing was sent"
      )
    case .malformedResponse(let reason)?:
      return HybridInferenceError.malformedResponse("the HTTP response is malformed: \(reason)")
    case nil:
      break
    }
    guard let urlError = error as? URLError else {
      return HybridInferenceError.malformedResponse(
        "transport failure: \(HybridInferenceError.describe(error))")
    }
    switch urlError.code {
    case .cancelled:
      return CancellationError()
    case .timedOut:
      return reached ? HybridInferenceError.timedOut(timeout) : HybridInferenceError.offline(urlError)
    case .networkConnectionLost:
      // Reset: offline when the request never went out, a lost connection
      // to a reachable server when it did.
      return reached ? HybridInferenceError.connectionLost(urlError) : HybridInferenceError.offline(urlError)
    case .badServerResponse where !receivedResponse:
      // Closed without answering; the same rule.
      return reached ? HybridInferenceError.connectionLost(urlError) : HybridInferenceError.offline(urlError)
    case .unsupportedURL where ["http", "https"].contains(urlError.failingURL?.scheme?.lowercased()):
      // URLSession on Linux (libcurl) reports a reply whose status line is
      // not HTTP this way; an http(s) URL is one it supports, so it is the
      // reply that is wrong, and the server was reached.
      return HybridInferenceError.malformedResponse("the reply is not HTTP")
    case .badURL, .unsupportedURL:
      return HybridInferenceError.invalidOptions(
        "the base URL is not usable: \(HybridInferenceError.describe(urlError))")
    case let code where offlineCodes.contains(code):
      return HybridInferenceError.offline(urlError)
    case _ where !reached:
      // Anything else that failed before the request went out never
      // reached the server either. FoundationNetworking reports some TLS
      // handshake failures this way, as `.unknown`.
      return HybridInferenceError.offline(urlError)
    default:
      return HybridInferenceError.malformedResponse(
        "transport failure: \(HybridInferenceError.describe(urlError))")
    }
  }
}
