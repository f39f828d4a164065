//! `heapdump=demand|exit|both`: a binary HPROF heap dump (`PREFIX.hprof`, hprof.rs writes the bytes) on
//! DataDumpRequest (SIGQUIT, `jcmd PID JVMTI.data_dump`) and/or at VM death.
//!
//! How the heap is read: one JVMTI FollowReferences from the roots, which reports every reachable
//! object once as the referee of its first edge (with its class's tag, size and array length), every
//! reference field, array element and static field as an edge with its index, every primitive field
//! and every primitive array's contents. Each object gets a tag, which is its HPROF id. The walk runs
//! in a JVMTI environment of its own (tags are per environment): the live tracker's and the XML
//! trace's tags in the agent's environment are not touched, no OBJECT_FREE can ever carry a dump's tag,
//! and disposing of the environment drops the dump's tags at once.
//!
//! Before the walk, classes, threads and the objects whose allocation site the live tracker knows are
//! tagged in that environment first, so that the walk's callbacks (which may call nothing) can tell
//! them by their tags alone: class mirrors get ids 1..=C (CLASS_DUMP, not INSTANCE_DUMP), threads
//! the next ones (ROOT_THREAD_OBJ and their stacks' roots), then site-tagged objects (their
//! INSTANCE_DUMP points at a STACK_TRACE of the allocating method and line, as hprof's did).
//!
//! Field values are placed by JVMTI's field index, which the specification defines over the class
//! hierarchy: the fields of every interface the class implements first, then those of
//! java.lang.Object, and so on down to the class itself, each class's in GetClassFields order, static
//! and instance fields alike. The dump lists each class's own instance fields in that same order and
//! an instance's values from its class up to java.lang.Object, as HPROF wants them.
//!
//! Objects reachable from nothing are not dumped (`jcmd GC.heap_dump` without `-all` does the same).
//! A class loaded between the class list and the walk has no tag: its instances are left out.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Mutex, OnceLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use jni_sys::{jlong, jmethodID, jobject};

use crate::hprof::{self, ty, ClassDump, Writer};
use crate::jni::Jni;
use crate::jvmti::{FrameInfo, Jvmti};
use crate::jvmti_ext::{reference, HeapReference, HeapVisitor, ACC_STATIC, CLASS_STATUS_PREPARED};
use crate::live::{self, Owner};
use crate::state::{agent, lock, Agent};

/// When a dump is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Off,
    /// On each DataDumpRequest (SIGQUIT, `jcmd PID JVMTI.data_dump`).
    Demand,
    /// At VM death.
    Exit,
    Both,
}

impl Mode {
    pub fn parse(value: &str) -> Result<Mode, String> {
        Ok(match value {
            "off" => Mode::Off,
            "demand" => Mode::Demand,
            "exit" => Mode::Exit,
            "both" => Mode::Both,
            _ => {
                return Err(format!(
                    "heapdump={value}: expected off, demand, exit or both"
                ))
            }
        })
    }
}

static MODE: OnceLock<Mode> = OnceLock::new();

/// From Agent_OnLoad: when to dump.
pub fn configure(mode: Mode) {
    let _ = MODE.set(mode);
}

fn mode() -> Mode {
    MODE.get().copied().unwrap_or_default()
}

/// DataDumpRequest: a dump now, if asked for on demand.
pub fn on_demand() {
    if !matches!(mode(), Mode::Demand | Mode::Both) {
        return;
    }
    let Some(a) = agent() else { return };
    // Sent on the signal dispatcher or attach listener thread: Java threads, attached already.
    let Some(jni) = a.java_vm.jni() else { return };
    write(a, jni);
}

/// VM_DEATH: a dump of the heap as the program leaves it, if asked for at exit.
pub fn at_exit(jni: Jni) {
    if !matches!(mode(), Mode::Exit | Mode::Both) {
        return;
    }
    if let Some(a) = agent() {
        write(a, jni);
    }
}

/// One dump at a time: two requests (SIGQUIT twice, or one during the exit dump) would share the
/// temporary-name counter but not the heap walk's memory, which is the heap's size again.
static DUMPING: Mutex<()> = Mutex::new(());

/// `HeapProxy.heapDump()` (`instr.Counts.heapDump()`): a dump now, whatever `heapdump=` says, since
/// the program asked for it; the path written, or None.
pub fn requested(jni: Jni) -> Option<String> {
    write(agent()?, jni)
}

fn write(a: &Agent, jni: Jni) -> Option<String> {
    let _one = lock(&DUMPING);
    let path = format!("{}.hprof", a.rules.output_path(std::process::id()));
    let started = Instant::now();
    match dump(a, jni, &path) {
        Ok(s) => {
            eprintln!(
                "instr: heap dump {path}: {} objects, {} classes, {} bytes in {} ms",
                s.objects,
                s.classes,
                s.bytes,
                started.elapsed().as_millis()
            );
            Some(path)
        }
        Err(e) => {
            eprintln!("instr: heap dump not written: {e}");
            None
        }
    }
}

struct Summary {
    objects: usize,
    classes: usize,
    bytes: u64,
}

/// The environment the walk tags in, disposed of however the dump ends.
struct WalkEnv(Jvmti);

impl Drop for WalkEnv {
    fn drop(&mut self) {
        self.0.dispose();
    }
}

/// A JNI local frame popped however the dump ends.
struct LocalFrame(Jni);

impl Drop for LocalFrame {
    fn drop(&mut self) {
        self.0.pop_frame();
    }
}

fn dump(a: &Agent, jni: Jni, path: &str) -> Result<Summary, String> {
    let env = WalkEnv(Jvmti::for_heap_walk(&a.java_vm)?);
    if !jni.push_frame(1024) {
        return Err("no room for JNI local references".into());
    }
    let _frame = LocalFrame(jni);
    let mut heap = Heap::default();
    heap.classes = read_classes(env.0, jni);
    heap.objects = heap
        .classes
        .iter()
        .map(|_| Obj {
            kind: CLASS,
            ..Obj::default()
        })
        .collect();
    let threads = env.0.all_stack_traces(MAX_FRAMES);
    let mut thread_tags = Vec::with_capacity(threads.len());
    for (thread, _) in &threads {
        thread_tags.push(heap.pre_tag(env.0, *thread, 0));
    }
    tag_allocation_sites(a, env.0, jni, &mut heap);
    let e = env.0.follow_references(&mut heap);
    if e != crate::jvmti::ERROR_NONE {
        return Err(format!("FollowReferences failed (JVMTI error {e})"));
    }
    let loaders: Vec<u64> = heap
        .classes
        .iter()
        .map(|c| {
            if c.loader.is_null() {
                0
            } else {
                env.0.tag(c.loader) as u64
            }
        })
        .collect();

    let tmp = crate::report_files::temp_path(path);
    let written = File::create(&tmp).map_err(|e| e.to_string()).and_then(|f| {
        let out = BufWriter::with_capacity(1 << 20, f);
        let w = write_hprof(a, jni, &heap, &threads, &thread_tags, &loaders, out)?;
        let file = w.into_inner().map_err(|e| e.to_string())?;
        file.sync_all().ok();
        std::fs::rename(&tmp, path).map_err(|e| e.to_string())
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {path}: {e}"));
    }
    Ok(Summary {
        objects: heap
            .objects
            .iter()
            .filter(|o| matches!(o.kind, INSTANCE | OBJ_ARRAY | PRIM_ARRAY))
            .count(),
        classes: heap.classes.len(),
        bytes: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
    })
}

/// Frames kept of each thread's stack.
const MAX_FRAMES: i32 = 4096;

struct Field {
    name: String,
    /// HPROF basic type.
    ty: u8,
    is_static: bool,
}

#[derive(Default)]
struct Class {
    /// JVM signature: `Ljava/lang/String;`, `[I`.
    sig: String,
    /// Tag of the superclass, 0 for none.
    super_tag: i64,
    loader: jobject,
    interface: bool,
    /// Tags of the interfaces it declares directly.
    interfaces: Vec<i64>,
    fields: Vec<Field>,
    /// JVMTI field index -> (offset in an instance's values, type).
    instance_slots: HashMap<i32, (u32, u8)>,
    /// Bytes of an instance's values, superclasses' fields included.
    instance_bytes: u32,
    /// JVMTI field index -> position in `statics`.
    static_slots: HashMap<i32, usize>,
    /// (field position in `fields`, value bits), filled by the walk.
    statics: Vec<(usize, u64)>,
    /// For an array class: the element type.
    element: Option<u8>,
}

impl Class {
    /// The name HPROF readers expect in LOAD_CLASS: `java/lang/String`, `[I`, `[Ljava/lang/String;`.
    fn hprof_name(&self) -> &str {
        if self.sig.starts_with('L') && self.sig.ends_with(';') {
            &self.sig[1..self.sig.len() - 1]
        } else {
            &self.sig
        }
    }
}

/// Lists every loaded class, tags it with its position + 1 in the walk's environment, and works out
/// where each field index of its instances and of its statics goes.
fn read_classes(env: Jvmti, jni: Jni) -> Vec<Class> {
    let list = env.loaded_classes();
    let mut classes: Vec<Class> = Vec::with_capacity(list.len());
    for (i, &c) in list.iter().enumerate() {
        env.set_tag(c, i as jlong + 1);
    }
    for &c in &list {
        let sig = env.class_signature(c).unwrap_or_default();
        let sup = jni.superclass(c);
        let super_tag = if sup.is_null() { 0 } else { env.tag(sup) };
        let element = sig
            .strip_prefix('[')
            .map(|e| hprof::type_of(e.as_bytes().first().copied().unwrap_or(b'L')));
        let interface = sup.is_null() && element.is_none() && sig != "Ljava/lang/Object;";
        let interfaces = env
            .implemented_interfaces(c)
            .into_iter()
            .map(|i| env.tag(i))
            .filter(|&t| t > 0)
            .collect();
        let mut fields = Vec::new();
        if element.is_none() && env.class_status(c) & CLASS_STATUS_PREPARED != 0 {
            for f in env.class_fields(c).unwrap_or_default() {
                let (name, fsig) = env.field_name(c, f).unwrap_or_default();
                fields.push(Field {
                    name,
                    ty: hprof::type_of(fsig.as_bytes().first().copied().unwrap_or(b'L')),
                    is_static: env.field_modifiers(c, f) & ACC_STATIC != 0,
                });
            }
        }
        classes.push(Class {
            sig,
            super_tag,
            loader: env.class_loader(c),
            interface,
            interfaces,
            fields,
            element,
            ..Class::default()
        });
    }
    lay_out(&mut classes);
    classes
}

/// Index of the class with `tag` (tags 1..=classes.len() are classes).
fn class_of(classes: &[Class], tag: i64) -> Option<usize> {
    (tag >= 1 && tag as usize <= classes.len()).then(|| tag as usize - 1)
}

/// The field slots of every class, by the JVMTI specification's numbering (module comment).
fn lay_out(classes: &mut [Class]) {
    let n = classes.len();
    // Superclass chain of each class, itself first.
    let chain = |i: usize| {
        let mut v = vec![i];
        let mut at = i;
        while let Some(s) = class_of(classes, classes[at].super_tag) {
            if v.contains(&s) {
                break;
            }
            v.push(s);
            at = s;
        }
        v
    };
    // Every interface a class implements, directly or through its superclasses and superinterfaces.
    let all_interfaces = |i: usize, include_supers: bool| {
        let mut seen = HashSet::new();
        let mut stack: Vec<usize> = if include_supers {
            chain(i)
                .into_iter()
                .flat_map(|k| {
                    classes[k]
                        .interfaces
                        .iter()
                        .filter_map(|&t| class_of(classes, t))
                })
                .collect()
        } else {
            classes[i]
                .interfaces
                .iter()
                .filter_map(|&t| class_of(classes, t))
                .collect()
        };
        while let Some(k) = stack.pop() {
            if seen.insert(k) {
                stack.extend(
                    classes[k]
                        .interfaces
                        .iter()
                        .filter_map(|&t| class_of(classes, t)),
                );
            }
        }
        seen.into_iter()
            .map(|k| classes[k].fields.len())
            .sum::<usize>()
    };
    let mut layouts = Vec::with_capacity(n);
    for i in 0..n {
        let c = &classes[i];
        let mut instance_slots = HashMap::new();
        let mut static_slots = HashMap::new();
        let mut instance_bytes = 0u32;
        if c.element.is_none() {
            let chain = chain(i);
            // Fields of all the classes above each one in the chain.
            let above = |k: usize| -> usize {
                chain
                    .iter()
                    .skip_while(|&&x| x != k)
                    .skip(1)
                    .map(|&x| classes[x].fields.len())
                    .sum()
            };
            if c.interface {
                let base = all_interfaces(i, false);
                for (j, f) in c.fields.iter().enumerate() {
                    if f.is_static {
                        static_slots.insert((base + j) as i32, static_slots.len());
                    }
                }
            } else {
                let interfaces = all_interfaces(i, true);
                for &k in &chain {
                    let base = interfaces + above(k);
                    for (j, f) in classes[k].fields.iter().enumerate() {
                        let index = (base + j) as i32;
                        if f.is_static {
                            if k == i {
                                static_slots.insert(index, static_slots.len());
                            }
                        } else {
                            instance_slots.insert(index, (instance_bytes, f.ty));
                            instance_bytes += hprof::type_size(f.ty) as u32;
                        }
                    }
                }
            }
        }
        layouts.push((instance_slots, static_slots, instance_bytes));
    }
    for (c, (instance_slots, static_slots, instance_bytes)) in classes.iter_mut().zip(layouts) {
        c.statics = c
            .fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_static)
            .map(|(p, _)| (p, 0))
            .collect();
        c.instance_slots = instance_slots;
        c.static_slots = static_slots;
        c.instance_bytes = instance_bytes;
    }
}

const UNSEEN: u8 = 0;
const INSTANCE: u8 = 1;
const OBJ_ARRAY: u8 = 2;
const PRIM_ARRAY: u8 = 3;
const CLASS: u8 = 4;
/// Reached, but of a class the dump does not know.
const SKIPPED: u8 = 5;

/// One object by tag (tag - 1 is its index).
#[derive(Clone, Copy, Default)]
struct Obj {
    kind: u8,
    /// Element type of a primitive array.
    element: u8,
    class: u32,
    /// Where its values are: `values` (instances), `elements` (object arrays), `primitives`.
    start: usize,
    len: u32,
    /// The rewriter's allocation-site id, 0 if not known.
    site: u32,
}

/// What the walk collects.
#[derive(Default)]
struct Heap {
    classes: Vec<Class>,
    objects: Vec<Obj>,
    values: Vec<u8>,
    elements: Vec<u64>,
    /// Primitive arrays' elements, big-endian; `start` usize::MAX until the callback gave them.
    primitives: Vec<u8>,
    /// (kind, object tag, thread tag, depth).
    roots: Vec<(i32, i64, i64, i32)>,
}

impl Heap {
    /// Gives `object` the next tag in the walk's environment (unless it has one) and returns it.
    fn pre_tag(&mut self, env: Jvmti, object: jobject, site: u32) -> i64 {
        let existing = env.tag(object);
        if existing != 0 {
            return existing;
        }
        self.objects.push(Obj {
            site,
            ..Obj::default()
        });
        let tag = self.objects.len() as i64;
        env.set_tag(object, tag);
        tag
    }

    fn obj(&mut self, tag: i64) -> Option<&mut Obj> {
        (tag >= 1)
            .then(|| self.objects.get_mut(tag as usize - 1))
            .flatten()
    }
}

impl HeapVisitor for Heap {
    fn reference(&mut self, r: &HeapReference, tag: jlong) -> jlong {
        let tag = if tag > 0 && (tag as usize) <= self.objects.len() {
            tag
        } else {
            self.objects.push(Obj::default());
            self.objects.len() as i64
        };
        let classes = &self.classes;
        let class = class_of(classes, r.class_tag);
        let obj = &mut self.objects[tag as usize - 1];
        if obj.kind == UNSEEN {
            match class {
                None => obj.kind = SKIPPED,
                Some(k) => {
                    obj.class = k as u32;
                    match classes[k].element {
                        Some(ty::OBJECT) => {
                            obj.kind = OBJ_ARRAY;
                            obj.start = self.elements.len();
                            obj.len = r.length.max(0) as u32;
                            self.elements
                                .resize(self.elements.len() + obj.len as usize, 0);
                        }
                        Some(element) => {
                            obj.kind = PRIM_ARRAY;
                            obj.element = element;
                            obj.start = usize::MAX;
                            obj.len = r.length.max(0) as u32;
                        }
                        None => {
                            obj.kind = INSTANCE;
                            obj.start = self.values.len();
                            let n = classes[k].instance_bytes as usize;
                            self.values.resize(self.values.len() + n, 0);
                        }
                    }
                }
            }
        }
        match r.referrer_tag {
            None => self.roots.push((r.kind, tag, r.thread_tag, r.depth)),
            Some(from) => match r.kind {
                reference::FIELD => self.set_field(from, r.index, ty::OBJECT, tag as u64),
                reference::STATIC_FIELD => self.set_static(from, r.index, tag as u64),
                reference::ARRAY_ELEMENT => {
                    if let Some(Obj {
                        kind: OBJ_ARRAY,
                        start,
                        len,
                        ..
                    }) = self.obj(from).copied()
                    {
                        if (r.index as u32) < len {
                            self.elements[start + r.index as usize] = tag as u64;
                        }
                    }
                }
                _ => {}
            },
        }
        tag
    }

    fn primitive_field(
        &mut self,
        kind: i32,
        index: i32,
        object_tag: jlong,
        jvmti_type: u8,
        bits: u64,
    ) {
        match kind {
            reference::FIELD => self.set_field(object_tag, index, hprof::type_of(jvmti_type), bits),
            reference::STATIC_FIELD => self.set_static(object_tag, index, bits),
            _ => {}
        }
    }

    fn primitive_array(&mut self, tag: jlong, count: i32, jvmti_type: u8, native: &[u8]) {
        let start = self.primitives.len();
        let t = hprof::type_of(jvmti_type);
        if let Some(o) = self.obj(tag) {
            if o.kind == PRIM_ARRAY && o.start == usize::MAX {
                o.start = start;
                o.len = count.max(0) as u32;
                o.element = t;
                hprof::elements_to_big_endian(native, hprof::type_size(t), &mut self.primitives);
            }
        }
    }

    fn abort(&self) -> bool {
        false
    }
}

impl Heap {
    fn set_field(&mut self, object: i64, index: i32, t: u8, bits: u64) {
        let Some(Obj {
            kind: INSTANCE,
            class,
            start,
            ..
        }) = self.obj(object).copied()
        else {
            return;
        };
        if let Some(&(offset, slot_type)) = self.classes[class as usize].instance_slots.get(&index)
        {
            if slot_type == t {
                let at = start + offset as usize;
                let n = hprof::type_size(t);
                hprof::set_value(&mut self.values[at..at + n], t, bits);
            }
        }
    }

    fn set_static(&mut self, class_tag: i64, index: i32, bits: u64) {
        if let Some(k) = class_of(&self.classes, class_tag) {
            let c = &mut self.classes[k];
            if let Some(&slot) = c.static_slots.get(&index) {
                c.statics[slot].1 = bits;
            }
        }
    }
}

/// Tags, in the walk's environment, the objects the live tracker tagged with their allocation site
/// (live.rs: tags of `Owner::Site`), and remembers the site. The agent's environment can only list
/// objects by tag value, so its tagged objects are walked once for the distinct site tags, then
/// fetched by those values.
fn tag_allocation_sites(a: &Agent, env: Jvmti, jni: Jni, heap: &mut Heap) {
    if a.live.is_none() {
        return;
    }
    let mut site_tags = HashSet::new();
    a.jvmti.for_each_tagged_object(|tag, _| {
        if let Some((Owner::Site(_), _)) = live::decode(tag) {
            site_tags.insert(tag);
        }
    });
    let site_tags: Vec<jlong> = site_tags.into_iter().collect();
    for chunk in site_tags.chunks(256) {
        if !jni.push_frame(1024) {
            return;
        }
        for (object, tag) in a.jvmti.objects_with_tags(chunk) {
            if let Some((Owner::Site(site), _)) = live::decode(tag) {
                heap.pre_tag(env, object, site);
            }
        }
        jni.pop_frame();
    }
}

/// Name identifiers live apart from object ids (tags count from 1), so that no reader that keeps one
/// table for both can confuse them.
const NAME_BASE: u64 = 1 << 48;
const FRAME_BASE: u64 = 1 << 47;
/// The empty stack trace every object without a known site points at, as HotSpot's dumps do.
const NO_TRACE: u32 = 1;

struct Names {
    ids: HashMap<String, u64>,
}

impl Names {
    fn id<W: Write>(&mut self, w: &mut Writer<W>, s: &str) -> Result<u64, String> {
        if let Some(&id) = self.ids.get(s) {
            return Ok(id);
        }
        let id = NAME_BASE + self.ids.len() as u64;
        w.utf8(id, s).map_err(|e| e.to_string())?;
        self.ids.insert(s.to_string(), id);
        Ok(id)
    }
}

#[allow(clippy::too_many_arguments)]
fn write_hprof<W: Write>(
    a: &Agent,
    jni: Jni,
    heap: &Heap,
    threads: &[(jobject, Vec<FrameInfo>)],
    thread_tags: &[i64],
    loaders: &[u64],
    out: W,
) -> Result<W, String> {
    let io = |e: std::io::Error| e.to_string();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut w = Writer::new(out, now).map_err(io)?;
    let mut names = Names {
        ids: HashMap::new(),
    };
    let classes = &heap.classes;
    // Class serials are positions + 1, like the tags.
    let mut serial_of: HashMap<String, u32> = HashMap::new();
    for (i, c) in classes.iter().enumerate() {
        let name = names.id(&mut w, c.hprof_name())?;
        w.load_class(i as u32 + 1, i as u64 + 1, NO_TRACE, name)
            .map_err(io)?;
        serial_of
            .entry(c.hprof_name().to_string())
            .or_insert(i as u32 + 1);
    }
    w.trace(NO_TRACE, 0, &[]).map_err(io)?;

    // Threads' stacks: one STACK_TRACE each (serials from 2), frames shared by (method, location).
    let mut resolver = crate::report::FrameResolver::new(a);
    let mut frame_ids: HashMap<(usize, i64), u64> = HashMap::new();
    let unknown = names.id(&mut w, "Unknown")?;
    let mut next_frame = FRAME_BASE;
    let mut thread_serial: HashMap<i64, u32> = HashMap::new();
    for (t, (_, frames)) in threads.iter().enumerate() {
        let mut ids = Vec::with_capacity(frames.len());
        for f in frames {
            let key = (f.method as usize, f.location);
            let id = match frame_ids.get(&key) {
                Some(&id) => id,
                None => {
                    let r = resolver.resolve(jni, f.method as jmethodID, f.location);
                    let class = r.class.replace('.', "/");
                    let line = match (f.location, r.line) {
                        (-1, _) => -3,
                        (_, Some(l)) => l as i32,
                        _ => -1,
                    };
                    let id = next_frame;
                    next_frame += 1;
                    let (m, s) = (
                        names.id(&mut w, &r.method)?,
                        names.id(&mut w, &r.descriptor)?,
                    );
                    let file = match &r.file {
                        Some(f) => names.id(&mut w, f)?,
                        None => unknown,
                    };
                    let serial = serial_of.get(&class).copied().unwrap_or(0);
                    w.frame(id, m, s, file, serial, line).map_err(io)?;
                    frame_ids.insert(key, id);
                    id
                }
            };
            ids.push(id);
        }
        let serial = t as u32 + 1;
        w.trace(serial + 1, serial, &ids).map_err(io)?;
        thread_serial.insert(thread_tags[t], serial);
    }

    // Allocation sites: one frame (the allocating method and line) and one STACK_TRACE each.
    let mut site_trace: HashMap<u32, u32> = HashMap::new();
    let mut next_trace = threads.len() as u32 + 2;
    for o in &heap.objects {
        if o.site == 0
            || site_trace.contains_key(&o.site)
            || !matches!(o.kind, INSTANCE | OBJ_ARRAY | PRIM_ARRAY)
        {
            continue;
        }
        let Some(info) = a.ids.site(o.site) else {
            continue;
        };
        let Some(m) = a.ids.method(info.method) else {
            continue;
        };
        let id = next_frame;
        next_frame += 1;
        let (mn, ms) = (names.id(&mut w, &m.name)?, names.id(&mut w, &m.descriptor)?);
        let serial = serial_of.get(&m.class).copied().unwrap_or(0);
        let line = info.line.map_or(-1, i32::from);
        w.frame(id, mn, ms, unknown, serial, line).map_err(io)?;
        w.trace(next_trace, 0, &[id]).map_err(io)?;
        site_trace.insert(o.site, next_trace);
        next_trace += 1;
    }

    // Names of fields, before the heap that uses them.
    let mut field_names: Vec<Vec<u64>> = Vec::with_capacity(classes.len());
    for c in classes {
        let mut v = Vec::with_capacity(c.fields.len());
        for f in &c.fields {
            v.push(names.id(&mut w, &f.name)?);
        }
        field_names.push(v);
    }

    // The heap: roots, classes, objects.
    let seen = |tag: i64| {
        heap.objects
            .get((tag as usize).wrapping_sub(1))
            .is_some_and(|o| matches!(o.kind, INSTANCE | OBJ_ARRAY | PRIM_ARRAY | CLASS))
    };
    for (t, &tag) in thread_tags.iter().enumerate() {
        if seen(tag) {
            w.root_thread_obj(tag as u64, t as u32 + 1, t as u32 + 2)
                .map_err(io)?;
        }
    }
    let threads_tagged: HashSet<i64> = thread_tags.iter().copied().collect();
    for &(kind, tag, thread, depth) in &heap.roots {
        if !seen(tag) {
            continue;
        }
        let id = tag as u64;
        let serial = thread_serial.get(&thread).copied().unwrap_or(0);
        match kind {
            reference::JNI_GLOBAL => w.root_jni_global(id, 0),
            reference::SYSTEM_CLASS => w.root_sticky_class(id),
            reference::MONITOR => w.root_monitor_used(id),
            reference::STACK_LOCAL => w.root_java_frame(id, serial, depth),
            reference::JNI_LOCAL => w.root_jni_local(id, serial, depth),
            reference::THREAD if threads_tagged.contains(&tag) => Ok(()),
            _ => w.root_unknown(id),
        }
        .map_err(io)?;
    }
    for (i, c) in classes.iter().enumerate() {
        let statics: Vec<(u64, u8, u64)> = c
            .statics
            .iter()
            .map(|&(p, bits)| (field_names[i][p], c.fields[p].ty, bits))
            .collect();
        let fields: Vec<(u64, u8)> = c
            .fields
            .iter()
            .zip(&field_names[i])
            .filter(|(f, _)| !f.is_static)
            .map(|(f, &n)| (n, f.ty))
            .collect();
        w.class_dump(&ClassDump {
            id: i as u64 + 1,
            trace: NO_TRACE,
            super_id: c.super_tag.max(0) as u64,
            loader: loaders[i],
            instance_size: c.instance_bytes,
            statics: &statics,
            fields: &fields,
        })
        .map_err(io)?;
    }
    let mut zeros = Vec::new();
    for (i, o) in heap.objects.iter().enumerate() {
        let id = i as u64 + 1;
        let trace = site_trace.get(&o.site).copied().unwrap_or(NO_TRACE);
        let class_id = o.class as u64 + 1;
        match o.kind {
            INSTANCE => {
                let n = classes[o.class as usize].instance_bytes as usize;
                w.instance_dump(id, trace, class_id, &heap.values[o.start..o.start + n])
            }
            OBJ_ARRAY => w.obj_array_dump(
                id,
                trace,
                class_id,
                &heap.elements[o.start..o.start + o.len as usize],
            ),
            PRIM_ARRAY => {
                let n = o.len as usize * hprof::type_size(o.element);
                let data = if o.start == usize::MAX {
                    zeros.resize(n, 0);
                    &zeros[..]
                } else {
                    &heap.primitives[o.start..o.start + n]
                };
                w.prim_array_dump(id, trace, o.element, o.len, data)
            }
            _ => Ok(()),
        }
        .map_err(io)?;
    }
    w.finish().map_err(io)
}
