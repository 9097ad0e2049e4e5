//! Host arrays: typed, row-major, 8-byte aligned storage.

use half::{bf16, f16};
use npyz::WriterBuilder;
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::{io::BufReader, path::Path};

/// Element types of Tessel arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementType {
    F16,
    BF16,
    F32,
    F64,
    I1,
    I8,
    I16,
    I32,
    I64,
    /// Unsigned integers: an entry function's `ui8`..`ui64` arrays (kernels
    /// see them as signless `i8`..`i64`).
    U8,
    U16,
    U32,
    U64,
    Index,
}

impl ElementType {
    /// Every element type with MLIR's spelling of it.
    const SPELLINGS: [(Self, &'static str); 14] = [
        (Self::F16, "f16"),
        (Self::BF16, "bf16"),
        (Self::F32, "f32"),
        (Self::F64, "f64"),
        (Self::I1, "i1"),
        (Self::I8, "i8"),
        (Self::I16, "i16"),
        (Self::I32, "i32"),
        (Self::I64, "i64"),
        (Self::U8, "ui8"),
        (Self::U16, "ui16"),
        (Self::U32, "ui32"),
        (Self::U64, "ui64"),
        (Self::Index, "index"),
    ];

    /// From MLIR's spelling (`f32`, `i1`, `index`, ...).
    pub fn from_mlir(text: &str) -> Option<Self> {
        Self::SPELLINGS.iter().find(|(_, name)| *name == text).map(|&(element, _)| element)
    }

    /// MLIR's spelling.
    pub fn mlir_name(self) -> &'static str {
        Self::SPELLINGS.iter().find(|&&(element, _)| element == self).map_or("?", |&(_, name)| name)
    }

    /// Bytes per element in memory (i1 takes a byte, as in MLIR's memrefs).
    pub fn size(self) -> usize {
        match self {
            Self::I1 | Self::I8 | Self::U8 => 1,
            Self::F16 | Self::BF16 | Self::I16 | Self::U16 => 2,
            Self::F32 | Self::I32 | Self::U32 => 4,
            Self::F64 | Self::I64 | Self::U64 | Self::Index => 8,
        }
    }

    /// The numpy dtype string stored in `.npy` headers (bf16 as raw `<u2`).
    pub fn npy_descr(self) -> &'static str {
        match self {
            Self::F16 => "<f2",
            Self::BF16 => "<u2",
            Self::F32 => "<f4",
            Self::F64 => "<f8",
            Self::I1 => "|b1",
            Self::I8 => "|i1",
            Self::I16 => "<i2",
            Self::I32 => "<i4",
            Self::I64 | Self::Index => "<i8",
            Self::U8 => "|u1",
            Self::U16 => "<u2",
            Self::U32 => "<u4",
            Self::U64 => "<u8",
        }
    }

    /// The signless type kernels see for this one (`ui8` → `i8`).
    pub fn signless(self) -> Self {
        match self {
            Self::U8 => Self::I8,
            Self::U16 => Self::I16,
            Self::U32 => Self::I32,
            Self::U64 => Self::I64,
            other => other,
        }
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, Self::U8 | Self::U16 | Self::U32 | Self::U64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Self::F16 | Self::BF16 | Self::F32 | Self::F64)
    }
}

/// Why an array could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum ArrayError {
    #[error("cannot read '{path}': {message}")]
    Read { path: String, message: String },
    #[error("cannot write '{path}': {message}")]
    Write { path: String, message: String },
    #[error("'{path}' holds {found} but the argument is {expected}")]
    Mismatch { path: String, found: String, expected: String },
    #[error("an array of {}x{} is too large to allocate", shape_text(shape), element.mlir_name())]
    TooLarge { element: ElementType, shape: Vec<usize> },
}

/// A row-major host array.
#[derive(Clone, Debug, PartialEq)]
pub struct HostArray {
    pub element: ElementType,
    pub shape: Vec<usize>,
    /// 8-byte words, so every element type is naturally aligned.
    words: Vec<u64>,
}

impl HostArray {
    /// A zero-filled array; sizes that overflow or cannot be allocated
    /// are an error (never an abort).
    pub fn zeros(element: ElementType, shape: &[usize]) -> Result<Self, ArrayError> {
        let too_large = || ArrayError::TooLarge { element, shape: shape.to_vec() };
        let bytes = Self::byte_size(element, shape).ok_or_else(too_large)?;
        let len = bytes.div_ceil(8).max(1);
        let mut words = Vec::new();
        words.try_reserve_exact(len).map_err(|_| too_large())?;
        words.resize(len, 0);
        Ok(Self { element, shape: shape.to_vec(), words })
    }

    /// Bytes of an array of `shape`, if addressable (no overflow).
    pub fn byte_size(element: ElementType, shape: &[usize]) -> Option<usize> {
        shape
            .iter()
            .try_fold(element.size(), |bytes, &extent| bytes.checked_mul(extent))
            .filter(|&bytes| bytes <= isize::MAX as usize)
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> &[u8] {
        let len = self.len() * self.element.size();
        // SAFETY: `words` holds at least `len` initialized bytes (the
        // constructors size it from the element count and size), and u8
        // has no alignment or validity requirements.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast(), len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len() * self.element.size();
        // SAFETY: as in `bytes`; the borrow of `self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast(), len) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast()
    }

    /// Element `i` (row-major) widened to f64, for printing and comparing.
    pub fn get(&self, i: usize) -> f64 {
        let size = self.element.size();
        let b = &self.bytes()[i * size..(i + 1) * size];
        match self.element {
            ElementType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
            ElementType::BF16 => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
            ElementType::F32 => f32::from_le_bytes(b.try_into().unwrap()) as f64,
            ElementType::F64 => f64::from_le_bytes(b.try_into().unwrap()),
            ElementType::I1 => (b[0] & 1) as f64,
            ElementType::I8 => b[0] as i8 as f64,
            ElementType::I16 => i16::from_le_bytes([b[0], b[1]]) as f64,
            ElementType::I32 => i32::from_le_bytes(b.try_into().unwrap()) as f64,
            ElementType::I64 | ElementType::Index => i64::from_le_bytes(b.try_into().unwrap()) as f64,
            ElementType::U8 => b[0] as f64,
            ElementType::U16 => u16::from_le_bytes([b[0], b[1]]) as f64,
            ElementType::U32 => u32::from_le_bytes(b.try_into().unwrap()) as f64,
            ElementType::U64 => u64::from_le_bytes(b.try_into().unwrap()) as f64,
        }
    }

    /// Sets element `i` from an f64 (rounded or truncated to the type).
    pub fn set(&mut self, i: usize, value: f64) {
        let size = self.element.size();
        let element = self.element;
        let b = &mut self.bytes_mut()[i * size..(i + 1) * size];
        match element {
            ElementType::F16 => b.copy_from_slice(&f16::from_f64(value).to_le_bytes()),
            ElementType::BF16 => b.copy_from_slice(&bf16::from_f64(value).to_le_bytes()),
            ElementType::F32 => b.copy_from_slice(&(value as f32).to_le_bytes()),
            ElementType::F64 => b.copy_from_slice(&value.to_le_bytes()),
            ElementType::I1 => b[0] = (value != 0.0) as u8,
            ElementType::I8 => b[0] = value as i8 as u8,
            ElementType::I16 => b.copy_from_slice(&(value as i16).to_le_bytes()),
            ElementType::I32 => b.copy_from_slice(&(value as i32).to_le_bytes()),
            ElementType::I64 | ElementType::Index => b.copy_from_slice(&(value as i64).to_le_bytes()),
            ElementType::U8 => b[0] = value as u8,
            ElementType::U16 => b.copy_from_slice(&(value as u16).to_le_bytes()),
            ElementType::U32 => b.copy_from_slice(&(value as u32).to_le_bytes()),
            ElementType::U64 => b.copy_from_slice(&(value as u64).to_le_bytes()),
        }
    }

    /// Integer element `i`, exactly (i1 as 0/1, unsigned types
    /// zero-extended, `ui64` as its bits, signed otherwise).
    pub fn get_int(&self, i: usize) -> i64 {
        let size = self.element.size();
        let b = &self.bytes()[i * size..(i + 1) * size];
        match self.element {
            ElementType::I1 => (b[0] & 1) as i64,
            ElementType::U8 => b[0] as i64,
            ElementType::U16 => u16::from_le_bytes([b[0], b[1]]) as i64,
            ElementType::U32 => u32::from_le_bytes(b.try_into().unwrap()) as i64,
            ElementType::I8 => b[0] as i8 as i64,
            ElementType::I16 => i16::from_le_bytes([b[0], b[1]]) as i64,
            ElementType::I32 => i32::from_le_bytes(b.try_into().unwrap()) as i64,
            _ => i64::from_le_bytes(b.try_into().unwrap()),
        }
    }

    /// Sets integer element `i`, truncating to the element's width.
    pub fn set_int(&mut self, i: usize, value: i64) {
        let size = self.element.size();
        let bytes = value.to_le_bytes();
        let element = self.element;
        let b = &mut self.bytes_mut()[i * size..(i + 1) * size];
        if element == ElementType::I1 {
            b[0] = (value & 1) as u8;
        } else {
            b.copy_from_slice(&bytes[..size]);
        }
    }

    /// Deterministic pseudo-random contents: floats in [-1, 1), integers in
    /// [-8, 8) (index: [0, 8), unsigned: [0, 16)), booleans.
    pub fn random(element: ElementType, shape: &[usize], seed: u64) -> Result<Self, ArrayError> {
        let mut array = Self::zeros(element, shape)?;
        let mut rng = StdRng::seed_from_u64(seed);
        for i in 0..array.len() {
            let value = match element {
                e if e.is_float() => rng.random_range(-1.0..1.0),
                ElementType::I1 => rng.random_range(0..2) as f64,
                ElementType::Index => rng.random_range(0..8) as f64,
                e if e.is_unsigned() => rng.random_range(0..16) as f64,
                _ => rng.random_range(-8..8) as f64,
            };
            array.set(i, value);
        }
        Ok(array)
    }

    /// Reads a `.npy` file (C or Fortran order), which must match `element`
    /// and `shape`.
    pub fn read_npy(path: &Path, element: ElementType, shape: &[usize]) -> Result<Self, ArrayError> {
        let display = path.display().to_string();
        let read_error = |message: String| ArrayError::Read { path: display.clone(), message };
        let file = std::fs::File::open(path).map_err(|e| read_error(e.to_string()))?;
        let npy = npyz::NpyFile::new(BufReader::new(file)).map_err(|e| read_error(e.to_string()))?;
        let descr = npy.header().dtype().descr().trim_matches('\'').replace('=', "<");
        let found_shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
        let fortran = npy.order() == npyz::Order::Fortran;
        if descr != element.npy_descr() || found_shape != shape {
            return Err(ArrayError::Mismatch {
                path: display,
                found: format!("{descr} {found_shape:?}"),
                expected: format!("{} {shape:?}", element.npy_descr()),
            });
        }
        let mut array = Self::zeros(element, shape)?;
        let bytes: Vec<u8> = match element {
            ElementType::F16 => le_bytes(npy.into_vec::<f16>(), f16::to_le_bytes),
            ElementType::BF16 => le_bytes(npy.into_vec::<u16>(), u16::to_le_bytes),
            ElementType::F32 => le_bytes(npy.into_vec::<f32>(), f32::to_le_bytes),
            ElementType::F64 => le_bytes(npy.into_vec::<f64>(), f64::to_le_bytes),
            ElementType::I1 => le_bytes(npy.into_vec::<bool>(), |b| [b as u8]),
            ElementType::I8 => le_bytes(npy.into_vec::<i8>(), i8::to_le_bytes),
            ElementType::I16 => le_bytes(npy.into_vec::<i16>(), i16::to_le_bytes),
            ElementType::I32 => le_bytes(npy.into_vec::<i32>(), i32::to_le_bytes),
            ElementType::I64 | ElementType::Index => le_bytes(npy.into_vec::<i64>(), i64::to_le_bytes),
            ElementType::U8 => le_bytes(npy.into_vec::<u8>(), u8::to_le_bytes),
            ElementType::U16 => le_bytes(npy.into_vec::<u16>(), u16::to_le_bytes),
            ElementType::U32 => le_bytes(npy.into_vec::<u32>(), u32::to_le_bytes),
            ElementType::U64 => le_bytes(npy.into_vec::<u64>(), u64::to_le_bytes),
        }
        .map_err(|e| read_error(e.to_string()))?;
        if bytes.len() != array.bytes().len() {
            return Err(read_error("truncated data".into()));
        }
        if fortran {
            // numpy saves a transposed array as is, column-major: element
            // (i0, i1, ...) at offset i0 + s0 * (i1 + s1 * (...)).
            let size = element.size();
            let target = array.bytes_mut();
            let mut index = vec![0usize; shape.len()];
            for element_index in 0..bytes.len() / size.max(1) {
                let source = index.iter().zip(shape).rev().fold(0, |offset, (&i, &extent)| offset * extent + i);
                target[element_index * size..(element_index + 1) * size]
                    .copy_from_slice(&bytes[source * size..(source + 1) * size]);
                // The next row-major index (the last dimension fastest).
                for (i, &extent) in index.iter_mut().zip(shape).rev() {
                    *i += 1;
                    if *i < extent {
                        break;
                    }
                    *i = 0;
                }
            }
        } else {
            array.bytes_mut().copy_from_slice(&bytes);
        }
        Ok(array)
    }

    /// Writes a C-order `.npy` file.
    pub fn write_npy(&self, path: &Path) -> Result<(), ArrayError> {
        let write_error =
            |e: std::io::Error| ArrayError::Write { path: path.display().to_string(), message: e.to_string() };
        let file = std::io::BufWriter::new(std::fs::File::create(path).map_err(write_error)?);
        let shape: Vec<u64> = self.shape.iter().map(|&d| d as u64).collect();
        let bytes = self.bytes();
        let size = self.element.size();
        let chunks = bytes.chunks_exact(size);
        macro_rules! write_as {
            ($t:ty, $convert:expr) => {{
                let mut writer = npyz::WriteOptions::<$t>::new()
                    .default_dtype()
                    .shape(&shape)
                    .writer(file)
                    .begin_nd()
                    .map_err(write_error)?;
                for chunk in chunks {
                    writer.push(&$convert(chunk)).map_err(write_error)?;
                }
                writer.finish().map_err(write_error)
            }};
        }
        match self.element {
            ElementType::F16 => write_as!(f16, |c: &[u8]| f16::from_le_bytes([c[0], c[1]])),
            ElementType::BF16 => write_as!(u16, |c: &[u8]| u16::from_le_bytes([c[0], c[1]])),
            ElementType::F32 => write_as!(f32, |c: &[u8]| f32::from_le_bytes(c.try_into().unwrap())),
            ElementType::F64 => write_as!(f64, |c: &[u8]| f64::from_le_bytes(c.try_into().unwrap())),
            ElementType::I1 => write_as!(bool, |c: &[u8]| c[0] != 0),
            ElementType::I8 => write_as!(i8, |c: &[u8]| c[0] as i8),
            ElementType::I16 => write_as!(i16, |c: &[u8]| i16::from_le_bytes([c[0], c[1]])),
            ElementType::I32 => write_as!(i32, |c: &[u8]| i32::from_le_bytes(c.try_into().unwrap())),
            ElementType::I64 | ElementType::Index => {
                write_as!(i64, |c: &[u8]| i64::from_le_bytes(c.try_into().unwrap()))
            }
            ElementType::U8 => write_as!(u8, |c: &[u8]| c[0]),
            ElementType::U16 => write_as!(u16, |c: &[u8]| u16::from_le_bytes([c[0], c[1]])),
            ElementType::U32 => write_as!(u32, |c: &[u8]| u32::from_le_bytes(c.try_into().unwrap())),
            ElementType::U64 => write_as!(u64, |c: &[u8]| u64::from_le_bytes(c.try_into().unwrap())),
        }
    }
}

/// Little-endian bytes of every element of a read vector.
/// `1000x3` for a shape (`1` for rank 0).
fn shape_text(shape: &[usize]) -> String {
    if shape.is_empty() { "1".into() } else { shape.iter().map(usize::to_string).collect::<Vec<_>>().join("x") }
}

fn le_bytes<T, const N: usize>(
    values: std::io::Result<Vec<T>>,
    to_bytes: impl Fn(T) -> [u8; N],
) -> std::io::Result<Vec<u8>> {
    Ok(values?.into_iter().flat_map(to_bytes).collect())
}

/// Compares two runs' arrays: integers exactly, floats to a tolerance of
/// their precision (NaN equals NaN). The error names the first difference,
/// calling the runs `ours` and `theirs`.
pub fn compare(computed: &[HostArray], reference: &[HostArray], ours: &str, theirs: &str) -> Result<(), String> {
    for (index, (a, b)) in computed.iter().zip(reference).enumerate() {
        let tolerance = match a.element {
            ElementType::F64 => 1e-12,
            ElementType::F32 => 1e-5,
            ElementType::F16 => 1e-2,
            ElementType::BF16 => 2e-2,
            _ => 0.0,
        };
        for i in 0..a.len() {
            let (x, y) = (a.get(i), b.get(i));
            let same = if a.element.is_float() {
                (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= tolerance * y.abs().max(1.0)
            } else {
                a.get_int(i) == b.get_int(i)
            };
            if !same {
                return Err(format!("argument #{index} differs at element {i}: {ours} {x}, {theirs} {y}"));
            }
        }
    }
    Ok(())
}
