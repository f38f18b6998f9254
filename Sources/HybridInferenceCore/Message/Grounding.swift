/// How Google Search grounded an answer (REST `GroundingMetadata`): the
/// queries it ran, the sources, which part of the answer each supports, and
/// the search suggestions to show.
///
/// Google's terms for grounding with Google Search ask apps to display the
/// search suggestions (`searchEntryPoint.renderedContent`, HTML and CSS)
/// with the grounded answer.
///
/// Decoded leniently: a field of an unexpected shape is left nil rather than
/// failing the whole answer, so that a newer or odder server's grounding
/// never costs the text it grounds.
public struct GroundingMetadata: Sendable, Hashable, Codable {
  /// The Google Search queries the model ran.
  public var webSearchQueries: [String]?
  /// The search suggestions to show beside the answer.
  public var searchEntryPoint: SearchEntryPoint?
  /// The sources, referred to by index from `groundingSupports`.
  public var groundingChunks: [GroundingChunk]?
  /// Which part of the answer which sources support.
  public var groundingSupports: [GroundingSupport]?

  /// Grounding metadata.
  public init(
    webSearchQueries: [String]? = nil, searchEntryPoint: SearchEntryPoint? = nil,
    groundingChunks: [GroundingChunk]? = nil, groundingSupports: [GroundingSupport]? = nil
  ) {
    self.webSearchQueries = webSearchQueries
    self.searchEntryPoint = searchEntryPoint
    self.groundingChunks = groundingChunks
    self.groundingSupports = groundingSupports
  }

  enum CodingKeys: String, CodingKey {
    case webSearchQueries, searchEntryPoint, groundingChunks, groundingSupports
  }

  /// Decodes each field on its own; one that does not decode is nil.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    webSearchQueries = try? container.decodeIfPresent([String].self, forKey: .webSearchQueries)
    searchEntryPoint = try? container.decodeIfPresent(SearchEntryPoint.self, forKey: .searchEntryPoint)
    groundingChunks = try? container.decodeIfPresent([GroundingChunk].self, forKey: .groundingChunks)
    groundingSupports = try? container.decodeIfPresent([GroundingSupport].self, forKey: .groundingSupports)
  }

  /// The search suggestions Google asks apps to display.
  public struct SearchEntryPoint: Sendable, Hashable, Codable {
    /// HTML and CSS to embed as they are (a web view, or the page that shows the answer).
    public var renderedContent: String?
    /// The same suggestions as base64 JSON, for rendering them natively.
    public var sdkBlob: String?
    /// An entry point.
    public init(renderedContent: String? = nil, sdkBlob: String? = nil) {
      self.renderedContent = renderedContent
      self.sdkBlob = sdkBlob
    }
  }

  /// One source.
  public struct GroundingChunk: Sendable, Hashable, Codable {
    /// A web page.
    public var web: WebSource?
    /// A source.
    public init(web: WebSource? = nil) { self.web = web }

    /// A web page the answer drew on.
    public struct WebSource: Sendable, Hashable, Codable {
      /// Its address (often a Google redirect link).
      public var uri: String?
      /// Its title, or its domain.
      public var title: String?
      /// Its domain, where the server says (Vertex AI).
      public var domain: String?
      /// A web source.
      public init(uri: String? = nil, title: String? = nil, domain: String? = nil) {
        self.uri = uri
        self.title = title
        self.domain = domain
      }
    }
  }

  /// A stretch of the answer and the sources behind it.
  public struct GroundingSupport: Sendable, Hashable, Codable {
    /// The stretch of the answer.
    public var segment: Segment?
    /// Indices into `groundingChunks`.
    public var groundingChunkIndices: [Int]?
    /// How sure the model is of each of those sources, 0 to 1.
    public var confidenceScores: [Double]?
    /// A support.
    public init(segment: Segment? = nil, groundingChunkIndices: [Int]? = nil, confidenceScores: [Double]? = nil) {
      self.segment = segment
      self.groundingChunkIndices = groundingChunkIndices
      self.confidenceScores = confidenceScores
    }

    /// A stretch of the answer text, in UTF-8 byte offsets.
    public struct Segment: Sendable, Hashable, Codable {
      /// The part of the content it lies in.
      public var partIndex: Int?
      /// Where it starts (bytes).
      public var startIndex: Int?
      /// Where it ends (bytes, exclusive).
      public var endIndex: Int?
      /// Its text.
      public var text: String?
      /// A segment.
      public init(partIndex: Int? = nil, startIndex: Int? = nil, endIndex: Int? = nil, text: String? = nil) {
        self.partIndex = partIndex
        self.startIndex = startIndex
        self.endIndex = endIndex
        self.text = text
      }
    }
  }
}

/// What the URL-context tool fetched (REST `UrlContextMetadata`). Decoded
/// leniently, like `GroundingMetadata`.
public struct URLContextMetadata: Sendable, Hashable, Codable {
  /// One entry per URL the model tried to read.
  public var urlMetadata: [URLMetadata]?

  /// URL-context metadata.
  public init(urlMetadata: [URLMetadata]? = nil) { self.urlMetadata = urlMetadata }

  enum CodingKeys: String, CodingKey { case urlMetadata }

  /// Decodes the list; one that does not decode is nil.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    urlMetadata = try? container.decodeIfPresent([URLMetadata].self, forKey: .urlMetadata)
  }

  /// One URL and whether it could be read.
  public struct URLMetadata: Sendable, Hashable, Codable {
    /// The URL.
    public var retrievedUrl: String?
    /// Whether it was read.
    public var urlRetrievalStatus: URLRetrievalStatus?
    /// An entry.
    public init(retrievedUrl: String? = nil, urlRetrievalStatus: URLRetrievalStatus? = nil) {
      self.retrievedUrl = retrievedUrl
      self.urlRetrievalStatus = urlRetrievalStatus
    }
  }
}

/// Whether the URL-context tool could read a URL (REST `UrlRetrievalStatus`).
///
/// A struct over the wire string, not an enum: the REST API adds values over
/// time, and a closed enum would turn a new one into a decoding failure.
public struct URLRetrievalStatus: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
  /// The wire name.
  public let rawValue: String
  /// A status by its wire name, for values newer than this library.
  public init(rawValue: String) { self.rawValue = rawValue }
  /// The wire name.
  public var description: String { rawValue }

  /// The page was read.
  public static let success = URLRetrievalStatus(rawValue: "URL_RETRIEVAL_STATUS_SUCCESS")
  /// The page could not be read.
  public static let error = URLRetrievalStatus(rawValue: "URL_RETRIEVAL_STATUS_ERROR")
  /// The page is behind a paywall.
  public static let paywall = URLRetrievalStatus(rawValue: "URL_RETRIEVAL_STATUS_PAYWALL")
  /// The page was judged unsafe.
  public static let unsafe = URLRetrievalStatus(rawValue: "URL_RETRIEVAL_STATUS_UNSAFE")
}
