//! The records `getdents64` fills a buffer with, as vigil's look for
//! leftovers reads /proc: any bytes end the list, and a listing written as
//! the kernel writes it gives back exactly its names that are numbers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_init::fuzzing;

/// A directory entry's name as the kernel allows it: no `/`, no NUL, at
/// most 255 bytes.
const NAME_MAX: usize = 255;

fuzz_target!(|data: &[u8]| {
    // Any bytes: each number found took a record of 20 bytes at least.
    let found = fuzzing::dirent_numbers(data).count();
    assert!(
        found * 20 <= data.len(),
        "{found} numbers in {} bytes",
        data.len()
    );

    // The bytes as names, one per `/`-separated piece, written as records.
    let names: Vec<&[u8]> = data
        .split(|&b| b == b'/')
        .filter(|name| !name.is_empty() && name.len() <= NAME_MAX && !name.contains(&0))
        .collect();
    let mut listing = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let len = (19 + name.len() + 1).next_multiple_of(8);
        listing.extend((i as u64 + 1).to_ne_bytes()); // inode
        listing.extend((i as i64 + 1).to_ne_bytes()); // offset of the next
        listing.extend((len as u16).to_ne_bytes());
        listing.push(8); // DT_REG
        listing.extend_from_slice(name);
        listing.resize(listing.len() + len - 19 - name.len(), 0);
    }
    let want: Vec<i32> = names
        .iter()
        .filter(|name| name.iter().all(u8::is_ascii_digit))
        .filter_map(|name| std::str::from_utf8(name).ok()?.parse().ok())
        .collect();
    let got: Vec<i32> = fuzzing::dirent_numbers(&listing).collect();
    assert_eq!(got, want);
});
