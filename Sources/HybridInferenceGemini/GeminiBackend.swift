import Foundation
import HybridInferenceCore

/// Which Google service serves a `CloudGeminiModel`: the Gemini Developer
/// API (`generativelanguage.googleapis.com`, an API key) or Vertex AI (a
/// Google Cloud project, a bearer token).
///
/// ```swift
/// CloudGeminiModel(name: "gemini-3.1-flash-lite")                          // .googleAI
/// CloudGeminiModel(name: "gemini-3.1-flash-lite",
///                  backend: .vertexAI(project: "my-project", location: "europe-west4"),
///                  authorization: .metadataServer)
/// ```
///
/// A struct with static members, as Firebase's `Backend` is, so that
/// options can be added without breaking an app. The project is never shown:
/// not in `description`, a mirror, an error or a log line.
public struct GeminiBackend: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
  enum Kind: Sendable, Hashable {
    case googleAI
    case vertexAI(project: String?, location: String?)
  }

  let kind: Kind

  /// The Gemini Developer API: `POST /v1beta/models/{m}:generateContent` on
  /// `generativelanguage.googleapis.com`, with `x-goog-api-key`.
  public static let googleAI = GeminiBackend(kind: .googleAI)

  /// Vertex AI: `POST /v1/projects/{project}/locations/{location}/
  /// publishers/google/models/{m}:generateContent` with `Authorization: Bearer`
  /// and `x-goog-user-project`.
  /// - Parameters:
  ///   - project: The Google Cloud project id; nil reads
  ///     `GOOGLE_CLOUD_PROJECT`. Without one the model is
  ///     `.unavailable(.missingProject)`.
  ///   - location: The region (`"us-central1"`, `"europe-west4"`) or
  ///     `"global"`; nil reads `GOOGLE_CLOUD_LOCATION`, then uses
  ///     `"global"`. `global` is served by `aiplatform.googleapis.com`, a
  ///     region by `{location}-aiplatform.googleapis.com`.
  public static func vertexAI(project: String? = nil, location: String? = nil) -> GeminiBackend {
    GeminiBackend(kind: .vertexAI(project: project, location: location))
  }

  /// `googleAI`, or `vertexAI(location: ...)` without the project.
  public var description: String {
    switch kind {
    case .googleAI: "googleAI"
    case .vertexAI(_, let location): "vertexAI(location: \(location ?? "from the environment"))"
    }
  }

  /// No children: the project stays out of `dump`.
  public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// A backend with its project and location read from the environment where
/// not given: what the endpoint builds URLs from.
struct ResolvedBackend: Sendable, Hashable {
  enum Kind: Sendable, Hashable {
    case googleAI
    /// Nil project: none given or in the environment (the model is unavailable).
    case vertexAI(project: String?, location: String)
  }

  let kind: Kind

  /// The Gemini Developer API.
  static let googleAI = ResolvedBackend(kind: .googleAI)

  private init(kind: Kind) { self.kind = kind }

  var isVertex: Bool {
    if case .vertexAI = kind { return true }
    return false
  }

  init(_ backend: GeminiBackend, environment: [String: String]) {
    switch backend.kind {
    case .googleAI:
      kind = .googleAI
    case .vertexAI(let project, let location):
      func value(_ given: String?, _ variable: String) -> String? {
        (given?.isEmpty == false ? given : nil) ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
      }
      kind = .vertexAI(
        project: value(project, "GOOGLE_CLOUD_PROJECT"),
        location: value(location, "GOOGLE_CLOUD_LOCATION") ?? "global")
    }
  }

  /// Whether a location can be a host name label (`us-central1`): only then
  /// is it put in a URL.
  static func isValidLocation(_ location: String) -> Bool {
    !location.isEmpty && location.utf8.count <= 63
      && location.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
  }

  /// The server when no base URL is given: Google's for the Gemini API,
  /// Vertex AI's for the location (nil when it cannot be a host name).
  func defaultBaseURL(environment: [String: String]) -> URL? {
    switch kind {
    case .googleAI:
      return environment["GOOGLE_GEMINI_BASE_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
        ?? CloudGeminiModel.defaultBaseURL
    case .vertexAI(_, let location):
      if let url = environment["GOOGLE_VERTEX_BASE_URL"].flatMap({ $0.isEmpty ? nil : URL(string: $0) }) {
        return url
      }
      guard Self.isValidLocation(location) else { return nil }
      let host = location == "global" ? "aiplatform.googleapis.com" : "\(location)-aiplatform.googleapis.com"
      return URL(string: "https://\(host)")
    }
  }

  /// `v1beta` for the Gemini API (every current feature lives there), `v1` for Vertex AI.
  var defaultAPIVersion: String { isVertex ? "v1" : "v1beta" }
}
