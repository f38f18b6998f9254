import Foundation

/// A piece of media that goes with a prompt: an image, other bytes (audio,
/// PDF, video), or a file the server already holds (a Gemini file URI).
///
/// ```swift
/// let prompt = Prompt("What is in this picture?",
///                     attachments: [.image(jpegBytes, mimeType: "image/jpeg")])
/// ```
///
/// An attachment is the wire part it becomes (`part`), so the transcript
/// keeps it as the Gemini `inlineData` or `fileData` part it is, and so does
/// every format that keeps the transcript. Who reads what:
/// - Gemini: every attachment (`inlineData` base64, `fileData` by URI).
/// - An OpenAI-compatible server: images as `image_url` data URLs, WAV and
///   MP3 audio as `input_audio`; any other media type, and every file URI
///   (only Gemini can open those), is `unsupportedRequest`.
/// - The device (`LocalSystemModel`) reads text only: a prompt with
///   attachments is `unsupportedRequest` there (so prefer-on-device falls
///   back to the cloud with the attachment), and attachments of earlier turns
///   reach it as a short placeholder (`[image: image/jpeg, 12 KB]`).
///
/// Inline bytes travel base64 in the request body: a request whose inline
/// media would take more than `RequestOptions.maximumInlineMediaBytes`
/// encoded is refused (`requestTooLarge`) before anything is sent; larger
/// files go by URI. Checked when the request starts, also before anything
/// is sent: the MIME type's form (`type/subtype`), an image's type
/// (`image/...`), bytes that are not empty, a URI with a scheme
/// (`invalidAttachment` otherwise).
public struct Attachment: Sendable, Hashable {
  /// The part the attachment is sent as: `inlineData` or `fileData`.
  public let part: Part
  /// Whether it was made with `image(_:mimeType:)`, whose type must be an image one.
  let isImage: Bool

  /// An image (`image/jpeg`, `image/png`, `image/webp`, `image/heic`, ...), sent inline.
  public static func image(_ data: Data, mimeType: String) -> Attachment {
    Attachment(part: Part(inlineData: Part.Blob(mimeType: mimeType, data: data)), isImage: true)
  }

  /// Bytes of any media type the model reads (`audio/wav`, `application/pdf`,
  /// `video/mp4`, an image too), sent inline.
  public static func data(_ data: Data, mimeType: String) -> Attachment {
    Attachment(part: Part(inlineData: Part.Blob(mimeType: mimeType, data: data)), isImage: false)
  }

  /// A file the server holds: a Gemini Files API URI
  /// (`https://generativelanguage.googleapis.com/v1beta/files/...`), a
  /// `gs://` object on Vertex AI, or a URL Gemini fetches. Sent as `fileData`.
  public static func file(uri: String, mimeType: String) -> Attachment {
    Attachment(part: Part(fileData: Part.FileData(mimeType: mimeType, fileUri: uri)), isImage: false)
  }

  /// The media type, as given.
  public var mimeType: String { part.inlineData?.mimeType ?? part.fileData?.mimeType ?? "" }

  /// The longest file URI accepted: far above any real one, small enough
  /// that a runaway string is refused rather than sent.
  static let maximumURIBytes = 8192

  /// Checks what can be checked without the server; `position` (from 1)
  /// names the attachment in the error.
  func validate(position: Int) throws(HybridInferenceError) {
    let mimeType = mimeType
    func refuse(_ why: String) -> HybridInferenceError { .invalidAttachment("attachment \(position): \(why)") }
    guard MediaType.isWellFormed(mimeType) else {
      throw refuse("the MIME type \"\(mimeType)\" is not of the form type/subtype (image/jpeg)")
    }
    if isImage, !MediaType.isImage(mimeType) {
      throw refuse("an image needs an image/ MIME type, not \(mimeType); use .data for other media")
    }
    if let blob = part.inlineData, blob.data.isEmpty { throw refuse("the \(mimeType) data is empty") }
    if let file = part.fileData {
      let uri = file.fileUri
      guard !uri.isEmpty, uri.utf8.count <= Self.maximumURIBytes,
        !uri.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }),
        let scheme = URL(string: uri)?.scheme, !scheme.isEmpty
      else {
        throw refuse(
          "the file URI is not a URI with a scheme (https://..., gs://...) of at most \(Self.maximumURIBytes) bytes")
      }
    }
  }
}
