/// Why an image's bytes were refused by ``ImageCheck``, before it becomes a
/// ``HybridInferenceError``.
///
/// The two kinds lead to different library errors: bytes that cannot be a
/// well-formed image of their format are the caller's to fix
/// (`invalidAttachment`); a well-formed image the on-device decoder cannot
/// read correctly (an arithmetic-coded JPEG, an RLE bitmap) is a limit of
/// the device (`unsupportedRequest`), which a hybrid answers in the cloud.
enum ImageDefect: Error, Equatable, Sendable {
  /// Not a well-formed file of its format: truncated, a length past the end,
  /// a value the format does not allow.
  case corrupt(String)
  /// A well-formed file of a variant the decoder does not read, or does
  /// not read correctly.
  case unsupported(String)

  /// The file ends inside the structure being read.
  static let truncated = ImageDefect.corrupt("the file ends inside its structure (truncated)")
}
