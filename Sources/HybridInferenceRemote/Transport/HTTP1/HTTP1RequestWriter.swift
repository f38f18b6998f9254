import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Writes a `URLRequest` as HTTP/1.1 bytes: request line with the
/// origin-form target, `Host`, the request's own headers, Basic credentials
/// from the URL's user and password (as libcurl does), `Content-Length`
/// and the body, in one buffer so it goes out in as few writes as the socket
/// allows.
///
/// No `Accept-Encoding` is sent, so every body comes back as identity and
/// the parser never inflates anything. The request's own `Host`,
/// `Content-Length`, `Transfer-Encoding` and `Connection` headers are
/// ignored: the framing is this writer's, so a header cannot make the
/// server read the body differently from how it was sent.
enum HTTP1RequestWriter {
  /// Headers whose value the writer decides.
  private static let framingHeaders: Set<String> = ["host", "content-length", "transfer-encoding", "connection"]

  /// The bytes of `request`; throws `TransportFailure.invalidRequestHeader`
  /// for a header whose name is not an HTTP token or whose value holds CR,
  /// LF or NUL (which would let it write headers or requests of its own),
  /// and `URLError(.badURL)` for a URL without a host.
  static func bytes(of request: URLRequest) throws -> [UInt8] {
    guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
      let host = components.percentEncodedHost, !host.isEmpty
    else { throw URLError(.badURL) }
    let method = request.httpMethod ?? "GET"
    guard isToken(method) else { throw URLError(.badURL) }
    var target = components.percentEncodedPath
    if target.isEmpty { target = "/" }
    if let query = components.percentEncodedQuery { target += "?" + query }
    guard !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { throw URLError(.badURL) }

    let body = request.httpBody ?? Data()
    var out: [UInt8] = []
    out.reserveCapacity(256 + body.count)
    func line(_ text: String) {
      out.append(contentsOf: text.utf8)
      out.append(contentsOf: [0x0D, 0x0A])
    }
    line("\(method) \(target) HTTP/1.1")
    let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    line(components.port.map { "Host: \(shownHost):\($0)" } ?? "Host: \(shownHost)")
    for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
      try validate(name: name, value: value)
      if framingHeaders.contains(name.lowercased()) { continue }
      line("\(name): \(value)")
    }
    // A user and password in the URL become Basic credentials, as libcurl
    // sends them, unless the request carries its own Authorization.
    if let user = components.user, request.value(forHTTPHeaderField: "Authorization") == nil {
      let credentials = Data("\(user):\(components.password ?? "")".utf8).base64EncodedString()
      line("Authorization: Basic \(credentials)")
    }
    if !body.isEmpty || !["GET", "HEAD", "DELETE", "OPTIONS"].contains(method) {
      line("Content-Length: \(body.count)")
    }
    line("")
    out.append(contentsOf: body)
    return out
  }

  /// Throws `TransportFailure.invalidRequestHeader` unless `name` is a token
  /// and `value` free of CR, LF and NUL. (FoundationNetworking's `URLRequest`
  /// already drops such values; this holds whatever built the request.)
  static func validate(name: String, value: String) throws {
    guard isToken(name) else { throw TransportFailure.invalidRequestHeader(name: "(not a token)") }
    guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
      throw TransportFailure.invalidRequestHeader(name: name)
    }
  }

  /// Whether `text` is an RFC 9110 token: the characters a method or header name may have.
  static func isToken(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
  }

  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
  }
}
