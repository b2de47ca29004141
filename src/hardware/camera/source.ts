// Where a camera's still comes from: the command that writes one JPEG to stdout, and what its
// failures mean for the owner. Two kinds of camera:
// - "rpicam": the Pi's ribbon camera through rpicam-still (libcamera-still on Bullseye), the only
//   way to it: libcamera's pipeline (ISP, 3A) is not reachable as a plain V4L2 capture device.
// - "/dev/videoN": any V4L2 capture device (a USB webcam, a capture card), through `ffmpeg -f v4l2`.
//   Chosen by measurement over the addon's own ioctls (bench/README.md "Camera"): starting ffmpeg
//   costs 87-134 ms median on the x64 host, while a camera's own start (the sensor's exposure
//   settling, the first frames a webcam drops) takes longer than that, and ffmpeg decodes every
//   pixel format a device may offer (YUYV, MJPEG, NV12...) and encodes the JPEG; an ioctl path would
//   need all of that in C++ to save at most that process start.
export interface CameraSource {
  /** what the owner reads in messages: "/dev/video0", "the Pi camera (rpicam-still)" */
  label: string;
  /** the commands to try in order (the next when one is not installed); each writes one JPEG to stdout */
  commands(width: number, height: number): { command: string; args: string[] }[];
  /** how to install the commands, for the owner who has none of them */
  install: string;
  /** An owner's explanation of a failure, from the command's stderr; undefined: none known. */
  explain(cause: string): string | undefined;
}

export const RPICAM = 'rpicam';
const V4L2_PATH = /^\/dev\/video\d+$/;

/** Why a device string is not a camera, or undefined when it is one. */
export function deviceProblem(device: string): string | undefined {
  if (device === RPICAM || V4L2_PATH.test(device)) return undefined;
  return `expected "rpicam" (the Pi camera) or a V4L2 device such as /dev/video0, found "${device}"`;
}

/** The ffmpeg command for one JPEG from `input` (ffmpeg's input options and -i), at exactly width × height. */
export function ffmpegStill(input: readonly string[], width: number, height: number): { command: string; args: string[] } {
  return {
    command: 'ffmpeg',
    // -vf scale: a device that cannot give the size asked for gives its nearest, made the size here.
    args: ['-hide_banner', '-loglevel', 'error', '-nostdin', ...input, '-frames:v', '1', '-vf', `scale=${width}:${height}`, '-c:v', 'mjpeg', '-q:v', '3', '-f', 'image2pipe', 'pipe:1'],
  };
}

/** The kernel's words (as ffmpeg or libcamera pass them on) → the owner's. */
function explainErrno(label: string, cause: string): string | undefined {
  if (/Device or resource busy|EBUSY|failed to acquire camera/i.test(cause)) return `${label} is busy: another program is using the camera (stop it, or wait until it is done)`;
  if (/No such file or directory|ENOENT|no cameras available/i.test(cause)) return `${label} is not there: the camera is not connected or not enabled`;
  if (/Permission denied|EACCES/i.test(cause)) return `${label} cannot be opened: permission denied (add the user pinclaw runs as to the group video)`;
  if (/Inappropriate ioctl|Not a video capture device|ENOTTY/i.test(cause)) return `${label} is not a video capture device (a metadata or output node: try another /dev/videoN)`;
  return undefined;
}

export function v4l2Source(device: string): CameraSource {
  return {
    label: device,
    commands: (width, height) => [ffmpegStill(['-f', 'v4l2', '-video_size', `${width}x${height}`, '-i', device], width, height)],
    install: 'install it with: sudo apt-get install ffmpeg',
    explain: (cause) => explainErrno(device, cause),
  };
}

export function rpicamSource(): CameraSource {
  const label = 'the Pi camera';
  // -n: no preview window; -t 1: shoot at once (the default waits 5 s); -o -: the JPEG on stdout.
  const args = (width: number, height: number) => ['-n', '-t', '1', '--width', String(width), '--height', String(height), '-e', 'jpg', '-o', '-'];
  return {
    label,
    commands: (width, height) => [{ command: 'rpicam-still', args: args(width, height) }, { command: 'libcamera-still', args: args(width, height) }],
    install: 'install them with: sudo apt-get install rpicam-apps (Raspberry Pi OS)',
    explain: (cause) => explainErrno(label, cause),
  };
}

/** The source of a configured device (checked by deviceProblem first). */
export function sourceFor(device: string): CameraSource {
  return device === RPICAM ? rpicamSource() : v4l2Source(device);
}
