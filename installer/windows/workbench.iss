; Cloud GPU Workbench — Windows installer (Inno Setup 6.3 or later).
;
; Built by installer/build.py on Windows (CI: .github/workflows/installers.yml) as
;   iscc /DAppVersion=0.1.0 /DSourceDir=build\bundle\cloud-gpu-workbench /DOutputDir=dist
;        /DIconFile=build\icons\app.ico installer\windows\workbench.iss
; from the PyInstaller one-folder bundle (workbench.exe = CLI, workbench-gui.exe = the desktop app).
;
; Per user, no administrator rights: PrivilegesRequired=lowest installs into
; %LOCALAPPDATA%\Programs\Cloud GPU Workbench, the Start menu entry goes into the user's own
; Start menu, and the uninstaller is registered under HKCU (Settings > Apps lists it).
; Optional tasks: a desktop shortcut, and the `workbench` command on the user's PATH.
; Uninstalling removes the program folder (and the PATH entry); the user's settings, state and
; Credential Manager entries are kept, as on the other platforms.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\build\bundle\cloud-gpu-workbench"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\icons\app.ico"
#endif
#define AppName "Cloud GPU Workbench"
#define AppExe "workbench-gui.exe"

[Setup]
; A fixed AppId: upgrades replace the previous install instead of adding a second one.
AppId={{6F1C2B7E-4D0A-4C55-9B7E-2E3A9C1D5B40}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=Cloud GPU Workbench contributors
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
ChangesEnvironment=yes
CloseApplications=yes
RestartApplications=no
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
OutputDir={#OutputDir}
OutputBaseFilename=cloud-gpu-workbench-{#AppVersion}-windows-x64-setup
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add the ""workbench"" command to my PATH (for the command line)"; GroupDescription: "Command line:"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{app}"; Comment: "Rent GPU machines, watch them train, stop the bill"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{app}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Anything added to the program folder after installing (the app itself writes only to the user's
; AppData folders, never here).
Type: filesandordirs; Name: "{app}"

[Code]
const
  EnvKey = 'Environment';

{ The user's PATH without the given folder (case-insensitive, whole entries only). }
function PathWithout(const Path, Dir: String): String;
var
  Rest, Entry: String;
  P: Integer;
begin
  Result := '';
  Rest := Path;
  while Rest <> '' do
  begin
    P := Pos(';', Rest);
    if P = 0 then
    begin
      Entry := Rest;
      Rest := '';
    end
    else
    begin
      Entry := Copy(Rest, 1, P - 1);
      Delete(Rest, 1, P);
    end;
    if (Entry <> '') and (CompareText(RemoveBackslashUnlessRoot(Entry), RemoveBackslashUnlessRoot(Dir)) <> 0) then
    begin
      if Result <> '' then
        Result := Result + ';';
      Result := Result + Entry;
    end;
  end;
end;

procedure AddToUserPath(const Dir: String);
var
  Path: String;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, EnvKey, 'Path', Path) then
    Path := '';
  Path := PathWithout(Path, Dir);
  if Path <> '' then
    Path := Path + ';';
  RegWriteExpandStringValue(HKEY_CURRENT_USER, EnvKey, 'Path', Path + Dir);
end;

procedure RemoveFromUserPath(const Dir: String);
var
  Path: String;
begin
  if RegQueryStringValue(HKEY_CURRENT_USER, EnvKey, 'Path', Path) then
    RegWriteExpandStringValue(HKEY_CURRENT_USER, EnvKey, 'Path', PathWithout(Path, Dir));
end;

procedure CurStepChanged(CurStep: TSetupStep);
begin
  if (CurStep = ssPostInstall) and WizardIsTaskSelected('addtopath') then
    AddToUserPath(ExpandConstant('{app}'));
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if CurUninstallStep = usUninstall then
    RemoveFromUserPath(ExpandConstant('{app}'));
end;
