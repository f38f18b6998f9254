/// What the loopback hub and CDN saw for one repository: the answer of
/// `GET /_stats/{org}/{name}`, read with `HubServerProcess.stats(repository:)`.
///
/// A download test asserts on the wire with it: which requests reached the
/// CDN, with which Range and If-Range, and how many body bytes moved (a resumed
/// download must move only what was missing; a token must never reach the CDN).
public struct HubStats: Decodable, Sendable {
  /// One request to the hub's resolve route.
  public struct HubRequest: Decodable, Sendable {
    /// GET or HEAD.
    public let method: String
    /// The request target as sent (percent-encoding kept).
    public let path: String
    /// The revision segment, decoded (`refs/pr/1`).
    public let revision: String
    /// The status answered (0 while unanswered).
    public let status: Int
    /// Whether the request carried an Authorization header.
    public let authorization: Bool
  }

  /// One request to the CDN (an `/lfs/` URL the hub pointed at, or a `/files/` URL).
  public struct CDNRequest: Decodable, Sendable {
    /// GET or HEAD.
    public let method: String
    /// The request target as sent.
    public let path: String
    /// The Range header, when sent.
    public let range: String?
    /// The If-Range header, when sent.
    public let ifRange: String?
    /// The status answered (0 while unanswered).
    public let status: Int
    /// Body bytes whose write to the socket completed.
    public let bytesSent: Int
    /// Whether the server has finished with the answer.
    public let complete: Bool
  }

  /// Every request to the hub, in order.
  public let hubRequests: [HubRequest]
  /// Every request to the CDN, in order.
  public let cdnRequests: [CDNRequest]
  /// The sum of `bytesSent` over `cdnRequests`.
  public let cdnBytesSent: Int
  /// Whether any CDN request carried an Authorization header.
  public let cdnAuthorizationSeen: Bool
  /// Whether any hub request carried an Authorization header.
  public let hubAuthorizationSeen: Bool
  /// The file version being served: 1, or 2 once a `changing` repository has changed.
  public let version: Int
  /// CDN answers still being written when the statistics were taken.
  public let cdnInFlight: Int
}
