/// A type a model can answer with: decodable from JSON, with a schema.
///
/// Conform a `Decodable` struct and you are done: the schema is derived from
/// its `Decodable` conformance (see `GenerationSchema.init(deriving:descriptions:)`).
/// Declare `generationSchema` yourself to add descriptions or to write the
/// schema by hand. This is Apple Foundation Models' `@Generable` without the
/// macro, which Linux toolchains cannot assume.
public protocol Generable: Decodable, Sendable {
  /// The schema answers must follow.
  static var generationSchema: GenerationSchema { get }
}

extension Generable {
  /// Derived from the type's `Decodable` conformance.
  public static var generationSchema: GenerationSchema { GenerationSchema(deriving: Self.self) }
}
